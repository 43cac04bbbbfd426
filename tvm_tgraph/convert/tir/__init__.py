"""MetaSchedule candidates of one task -> configured graph.

The graph is the task's unscheduled ``PrimFunc``, the same for every candidate:

* nodes: the root block, every block, every loop, every buffer;
* edges: loop nesting (root -> outer loop -> ... -> inner loop -> block), buffer -> block for
  reads, block -> buffer for writes.

Loops, blocks and the root are configurable. One candidate's configuration is read off
its trace (the decisions MetaSchedule made, before post-processing): tile factors of each
loop, compute-at / reverse-compute-at and their depth, inlining, cache stages, rfactor,
fusion, and the parallel / vectorize / unroll annotations. What the schedule produced is
added as global features: TVM's ``PerStoreFeature`` of the scheduled program, averaged and
maxed over its stores, and the recomputation: the scheduled program's float operations over
the unscheduled program's (log2; above 0 where a compute location recomputes a producer
inside its consumer's loops). Two candidates that differ in any decision differ in their
features.

The sub-modules, one job each: :mod:`.schema` (node kinds and feature columns),
:mod:`.program_graph` (the static graph of a task), :mod:`.trace` (a trace's decisions as
configuration features), :mod:`.store_features` (``PerStoreFeature`` pooled to global
features), :mod:`.store_extractor` (``PerStoreFeature`` rows extracted once per candidate,
which XGBoost can share), :mod:`.lru` (the caches' LRU) and :mod:`.converter`
(:class:`TirConverter`, with its caches).
"""

from .converter import TirConverter
from .program_graph import STATEMENT_KINDS, TaskGraph, task_graph
from .schema import (
    CONFIG_FEATURES, F_CONFIG, F_GLOBAL, F_NODE, FEATURE_SCHEMA, FEATURE_SCHEMA_VERSION, KIND, NODE_FEATURES,
    NODE_KINDS, RECOMPUTE_COLUMN,
)
from .store_features import store_features
from .trace import parse_trace, trace_config_features

__all__ = [
    "CONFIG_FEATURES", "F_CONFIG", "F_GLOBAL", "F_NODE", "FEATURE_SCHEMA", "FEATURE_SCHEMA_VERSION", "KIND",
    "NODE_FEATURES", "NODE_KINDS", "RECOMPUTE_COLUMN", "STATEMENT_KINDS", "TaskGraph", "TirConverter", "parse_trace",
    "store_features", "task_graph", "trace_config_features",
]
