"""The TIR converter's feature schema: node kinds and the columns of every feature array."""

from __future__ import annotations

import math

from ...graph import FeatureSchema

#: Bumped whenever the meaning of a feature changes; checkpoints record it.
FEATURE_SCHEMA_VERSION = "tir-2"

NODE_KINDS = (
    "root",
    "block_spatial",
    "block_reduction",
    "block_opaque",
    "loop_spatial",
    "loop_reduction",
    "loop_opaque",
    "buffer_input",
    "buffer_output",
    "buffer_intermediate",
)
KIND = {name: i for i, name in enumerate(NODE_KINDS)}

# Node feature columns (static, shared by all candidates).
NODE_FEATURES = (
    "log_extent",        # loop extent, or product of a block's spatial extents
    "log_reduce_extent",  # product of a block's reduction extents
    "num_iter_vars",
    "depth",             # loops above a block / loop
    "num_reads",
    "num_writes",
    "has_init",
    "log_num_arith",     # +, -, *, / in a block body
    "log_num_minmax",    # max, min, select, if_then_else
    "log_num_calls",     # exp, tanh, sqrt, ... intrinsic calls
    "log_num_loads",
    "log_buffer_size",
    "buffer_ndim",
    "dtype_bits",
)
F_NODE = len(NODE_FEATURES)

# Config feature columns, one block of columns per configurable node family.
CONFIG_FEATURES = (
    # loops
    "loop_tiled", "loop_tile_levels", "loop_tile_0", "loop_tile_1", "loop_tile_2", "loop_tile_3",
    "loop_tile_innermost", "loop_fused", "loop_parallel", "loop_vectorize", "loop_unroll",
    "loop_rfactor",
    # blocks
    "block_inlined", "block_reverse_inlined", "block_compute_at", "block_reverse_compute_at",
    "block_attach_inner_volume", "block_attach_position", "block_cache_write", "block_cache_read",
    "block_rfactor", "block_multi_level_tiled", "block_sampled_location",
    "block_rf_compute_at", "block_rf_sampled_location",
    # root
    "root_parallel", "root_vectorize", "root_unroll_explicit", "root_unroll_implicit",
    "root_annotations",
)
F_CONFIG = len(CONFIG_FEATURES)
#: Column of each configuration feature.
CONFIG_COLUMN = {name: i for i, name in enumerate(CONFIG_FEATURES)}

PER_STORE_FEATURES = 164
#: PerStoreFeature's float arithmetic columns (multiply-add, add/subtract, multiply,
#: divide/modulo, compare, math and other calls), each ``log2(1 + count)``.
FLOAT_OP_COLUMNS = slice(0, 7)
#: Global features: mean and max of PerStoreFeature over stores, log2(1 + stores), and the
#: recomputation: log2(1 + float ops of the candidate) - log2(1 + float ops of the unscheduled
#: program) (above 0 where a compute location recomputes a producer inside its consumer).
F_GLOBAL = 2 * PER_STORE_FEATURES + 2
#: The recomputation's column in the global features.
RECOMPUTE_COLUMN = F_GLOBAL - 1

#: The widths of this converter's graphs (size a network with ``TGraphConfig.from_schema``).
FEATURE_SCHEMA = FeatureSchema(FEATURE_SCHEMA_VERSION, len(NODE_KINDS), F_NODE, F_CONFIG, F_GLOBAL)


def log2p(x: float) -> float:
    """``log2(1 + max(x, 0))``: the scale of every size and count feature."""
    return math.log2(1.0 + max(float(x), 0.0))
