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
maxed over its stores. Two candidates that differ in any decision differ in their features.
"""

from __future__ import annotations

import math
import re
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np

from ..errors import UnsupportedProgramError
from ..graph import ConfiguredGraph, FeatureSchema

#: Bumped whenever the meaning of a feature changes; checkpoints record it.
FEATURE_SCHEMA_VERSION = "tir-1"

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
_C = {name: i for i, name in enumerate(CONFIG_FEATURES)}

PER_STORE_FEATURES = 164
#: Global features: mean and max of PerStoreFeature over stores, and log2(1 + stores).
F_GLOBAL = 2 * PER_STORE_FEATURES + 1

# Trace instructions (as ``sch.<method>`` in a trace's Python form) that carry no choice of
# their own: lookups, or steps fully determined by the choices the reader does record.
_STRUCTURAL_INSTRUCTIONS = frozenset({
    "get_child_blocks", "unannotate", "decompose_reduction", "transform_layout", "bind",
    "storage_align", "set_scope", "add_unit_loop", "set_axis_separator",
})
_ARITH = frozenset({"Add", "Sub", "Mul", "Div", "FloorDiv", "FloorMod", "Mod"})
_MINMAX = frozenset({"Max", "Min", "Select"})


#: The widths of this converter's graphs (size a network with ``TGraphConfig.from_schema``).
FEATURE_SCHEMA = FeatureSchema(FEATURE_SCHEMA_VERSION, len(NODE_KINDS), F_NODE, F_CONFIG, F_GLOBAL)


def _log2p(x: float) -> float:
    return math.log2(1.0 + max(float(x), 0.0))


def _int(expr) -> int | None:
    value = getattr(expr, "value", expr)
    return int(value) if isinstance(value, int) else None


@dataclass
class TaskGraph:
    """The static part of a task's configured graph, and the maps the trace reader needs."""

    node_kind: np.ndarray
    node_feat: np.ndarray
    edge_index: np.ndarray
    config_node_ids: np.ndarray
    root: int
    blocks: dict[str, int]
    block_loops: dict[str, list[int]]
    producers: dict[str, list[str]]
    consumers: dict[str, list[str]]
    loop_extent: dict[int, int]

    def config_row(self) -> dict[int, int]:
        """Node id -> row in ``config_feat``."""
        return {int(node): row for row, node in enumerate(self.config_node_ids)}


#: What the graph builder does with each statement kind of TVM 0.27's TIR (``tvm.tirx.stmt``;
#: ``SBlockRealize`` is ``tvm.s_tir``'s): a node of its own (loops, blocks, a ``While`` as
#: an opaque loop), its children walked in place (sequences, branches, attribute scopes),
#: a buffer node (a function-level ``T.alloc_buffer`` is an ``AllocBuffer`` statement, with
#: no body, before the statements that use it), or nothing (leaves: stores, evaluations,
#: bindings, declarations of views, asserts and control transfers). A test checks that
#: every statement class TVM defines is listed.
STATEMENT_KINDS = {
    "For": "loop", "While": "while", "SeqStmt": "sequence", "SBlockRealize": "block",
    "IfThenElse": "branch", "AttrStmt": "scope", "AllocBuffer": "allocation",
    "DeclBuffer": "leaf", "Bind": "leaf", "BufferStore": "leaf", "Evaluate": "leaf", "AssertStmt": "leaf",
    "Break": "leaf", "Continue": "leaf", "Return": "leaf", "ScopeIdDefStmt": "leaf", "TilePrimitiveCall": "leaf",
}


class _GraphBuilder:
    """Walks a PrimFunc once and records nodes, features and edges."""

    def __init__(self) -> None:
        self.kinds: list[int] = []
        self.feats: list[np.ndarray] = []
        self.edges: list[tuple[int, int]] = []
        self.blocks: dict[str, int] = {}
        self.block_loops: dict[str, list[int]] = {}
        self.block_reads: dict[str, list[str]] = {}
        self.block_writes: dict[str, list[str]] = {}
        self.loop_extent: dict[int, int] = {}
        self.buffers: dict[str, int] = {}

    def add_node(self, kind: str, **features: float) -> int:
        vector = np.zeros(F_NODE, dtype=np.float32)
        for key, value in features.items():
            vector[NODE_FEATURES.index(key)] = value
        self.kinds.append(KIND[kind])
        self.feats.append(vector)
        return len(self.kinds) - 1

    def add_buffer(self, buffer, kind: str) -> None:
        shape = [_int(dim) for dim in buffer.shape]
        if any(dim is None for dim in shape):
            raise UnsupportedProgramError(
                f"buffer {buffer.name!r} has a symbolic shape {list(buffer.shape)} (dynamic shapes)"
            )
        bits = tvm_dtype_bits(str(buffer.dtype))
        self.buffers[str(buffer.name)] = self.add_node(
            kind, log_buffer_size=_log2p(math.prod(shape)) / 16, buffer_ndim=len(shape) / 4,
            dtype_bits=bits / 32,
        )

    def walk(self, stmt, parent: int, loops: list[int]) -> None:
        """Add the nodes of statement ``stmt`` under node ``parent`` (see :data:`STATEMENT_KINDS`)."""
        cls = type(stmt).__name__
        kind = STATEMENT_KINDS.get(cls)
        if kind is None:
            raise UnsupportedProgramError(f"TIR statement {cls} is not supported by the converter")
        if kind == "loop":
            extent = _int(stmt.extent)
            if extent is None:
                raise UnsupportedProgramError(
                    f"loop {stmt.loop_var} has a non-constant extent {stmt.extent} (dynamic shapes)"
                )
            node = self.add_node("loop_spatial", log_extent=_log2p(extent) / 16, depth=len(loops) / 8)
            self.loop_extent[node] = extent
            self.edges.append((parent, node))
            self.walk(stmt.body, node, loops + [(node, stmt.loop_var)])
        elif kind == "while":
            node = self.add_node("loop_opaque", depth=len(loops) / 8)
            self.edges.append((parent, node))
            self.walk(stmt.body, node, loops)
        elif kind == "sequence":
            for child in stmt:
                self.walk(child, parent, loops)
        elif kind == "block":
            self.add_block(stmt, parent, loops)
        elif kind == "branch":
            self.walk(stmt.then_case, parent, loops)
            if stmt.else_case is not None:
                self.walk(stmt.else_case, parent, loops)
        elif kind == "scope":
            self.walk(stmt.body, parent, loops)
        elif kind == "allocation":
            self.add_buffer(stmt.buffer, "buffer_intermediate")

    def add_block(self, realize, parent: int, loops: list) -> None:
        block = realize.block
        name = str(block.name_hint)
        iter_types = [int(iv.iter_type) for iv in block.iter_vars]
        extents = [_int(iv.dom.extent) for iv in block.iter_vars]
        if any(extent is None for extent in extents):
            raise UnsupportedProgramError(f"block {name!r} has a symbolic iteration domain")
        if any(t not in (0, 2) for t in iter_types):
            kind = "block_opaque"
        else:
            kind = "block_reduction" if 2 in iter_types else "block_spatial"
        counts = _count_ops(block.body)
        spatial = math.prod(e for e, t in zip(extents, iter_types) if t == 0)
        reduce = math.prod(e for e, t in zip(extents, iter_types) if t == 2)
        node = self.add_node(
            kind, log_extent=_log2p(spatial) / 16, log_reduce_extent=_log2p(reduce) / 16,
            num_iter_vars=len(extents) / 8, depth=len(loops) / 8,
            num_reads=len(block.reads) / 4, num_writes=len(block.writes) / 4,
            has_init=float(block.init is not None),
            log_num_arith=_log2p(counts["arith"]) / 4, log_num_minmax=_log2p(counts["minmax"]) / 4,
            log_num_calls=_log2p(counts["call"]) / 4, log_num_loads=_log2p(counts["load"]) / 4,
        )
        if name in self.blocks:
            raise UnsupportedProgramError(f"two blocks are named {name!r}")
        self.blocks[name] = node
        self.edges.append((parent, node))
        self._mark_reduction_loops(realize, loops, iter_types)
        self.block_loops[name] = [loop for loop, _ in loops]
        self.block_reads[name] = [str(region.source.name) for region in block.reads]
        self.block_writes[name] = [str(region.source.name) for region in block.writes]
        for buffer in block.alloc_buffers:
            self.add_buffer(buffer, "buffer_intermediate")
        if not isinstance(block.body, type(None)) and type(block.body).__name__ != "BufferStore":
            self.walk(block.body, node, [])

    def _mark_reduction_loops(self, realize, loops: list, iter_types: list[int]) -> None:
        """A loop is a reduction loop when it binds a reduction iteration variable."""
        names = {str(var): node for node, var in loops}
        for value, iter_type in zip(realize.iter_values, iter_types):
            if iter_type == 2 and str(value) in names:
                self.kinds[names[str(value)]] = KIND["loop_reduction"]
            elif iter_type not in (0, 2):
                for var_name, node in names.items():
                    if var_name in str(value):
                        self.kinds[node] = KIND["loop_opaque"]


def tvm_dtype_bits(dtype: str) -> int:
    """Bit width of a TVM dtype string such as ``"float32"`` or ``"int8x4"``."""
    digits = "".join(ch for ch in dtype.split("x")[0] if ch.isdigit())
    return int(digits) if digits else 1


def _count_ops(stmt) -> dict[str, int]:
    """Count arithmetic, min/max, call and load nodes in a block body (a small tree)."""
    counts = {"arith": 0, "minmax": 0, "call": 0, "load": 0}
    stack = [stmt]
    while stack:
        node = stack.pop()
        cls = type(node).__name__
        if cls in _ARITH:
            counts["arith"] += 1
        elif cls in _MINMAX:
            counts["minmax"] += 1
        elif cls == "Call":
            counts["call"] += 1
            stack.extend(node.args)
            continue
        elif cls == "BufferLoad":
            counts["load"] += 1
            continue
        for attr in ("a", "b", "value", "condition", "true_value", "false_value"):
            child = getattr(node, attr, None)
            if child is not None and not isinstance(child, (int, float)):
                stack.append(child)
    return counts


def _single_prim_func(mod):
    import tvm

    funcs = [(gv.name_hint, f) for gv, f in mod.functions.items() if isinstance(f, tvm.tirx.PrimFunc)]
    if len(funcs) != 1:
        raise UnsupportedProgramError(
            f"a MetaSchedule task holds exactly one PrimFunc; this module has {len(funcs)}"
        )
    return funcs[0][1]


def task_graph(mod) -> TaskGraph:
    """Build the static graph of a MetaSchedule task's workload.

    Parameters
    ----------
    mod : tvm.IRModule
        The task's unscheduled module (one ``PrimFunc`` with blocks).

    Returns
    -------
    TaskGraph

    Raises
    ------
    UnsupportedProgramError
        For a program without blocks, with dynamic shapes or with a statement the
        converter does not know; the message names the construct.
    """
    func = _single_prim_func(mod)
    if type(func.body).__name__ != "SBlockRealize":
        raise UnsupportedProgramError(
            f"PrimFunc body is a {type(func.body).__name__}, not a root block: "
            "the program is not in MetaSchedule's block form (already lowered?)"
        )
    builder = _GraphBuilder()
    root = builder.add_node("root")
    root_block = func.body.block
    written = set()
    _collect_written(root_block, written)
    for param in func.params:
        if hasattr(param, "shape"):
            builder.add_buffer(param, "buffer_output" if str(param.name) in written else "buffer_input")
    for buffer in root_block.alloc_buffers:
        builder.add_buffer(buffer, "buffer_intermediate")
    builder.walk(root_block.body, root, [])
    if not builder.blocks:
        raise UnsupportedProgramError("PrimFunc has no blocks to schedule")

    producers = {name: [] for name in builder.blocks}
    consumers = {name: [] for name in builder.blocks}
    writer_of = {}
    for name, writes in builder.block_writes.items():
        for buffer in writes:
            writer_of.setdefault(buffer, name)
            if buffer in builder.buffers:
                builder.edges.append((builder.blocks[name], builder.buffers[buffer]))
    for name, reads in builder.block_reads.items():
        for buffer in reads:
            if buffer in builder.buffers:
                builder.edges.append((builder.buffers[buffer], builder.blocks[name]))
            producer = writer_of.get(buffer)
            if producer is not None and producer != name and producer not in producers[name]:
                producers[name].append(producer)
                consumers[producer].append(name)

    kinds = np.asarray(builder.kinds, dtype=np.int64)
    configurable = np.flatnonzero(kinds < KIND["buffer_input"]).astype(np.int64)
    return TaskGraph(
        node_kind=kinds,
        node_feat=np.stack(builder.feats).astype(np.float32),
        edge_index=np.asarray(builder.edges, dtype=np.int64).T.reshape(2, -1),
        config_node_ids=configurable,
        root=root,
        blocks=builder.blocks,
        block_loops=builder.block_loops,
        producers=producers,
        consumers=consumers,
        loop_extent=builder.loop_extent,
    )


def _collect_written(block, written: set) -> None:
    """Names of buffers written by any block under ``block`` (recursing through the body)."""
    stack = [block.body]
    while stack:
        node = stack.pop()
        cls = type(node).__name__
        if cls == "SBlockRealize":
            written.update(str(region.source.name) for region in node.block.writes)
            stack.append(node.block.body)
        elif cls == "SeqStmt":
            stack.extend(node)
        elif cls == "IfThenElse":
            stack.append(node.then_case)
            if node.else_case is not None:
                stack.append(node.else_case)
        elif hasattr(node, "body"):
            stack.append(node.body)


# ---------------------------------------------------------------------------------------
# Trace -> configuration features
#
# A trace is read in its Python form (``str(trace)``, one ``sch.<method>(...)`` call a line):
# TVM prints it in C++ about 8x faster than ``Trace.as_json()`` serialises it.

_LINE = re.compile(r"^\s*(?:(?P<outputs>[\w, ]+?)\s*=\s*)?sch\.(?P<method>\w+)\((?P<args>.*)\)\s*$")
_IDENT = re.compile(r"^[A-Za-z_]\w*$")


def _split_top_level(text: str) -> list[str]:
    """Split ``text`` at commas that are outside brackets and quotes."""
    parts, depth, quote, start = [], 0, "", 0
    for i, ch in enumerate(text):
        if quote:
            if ch == quote and text[i - 1] != "\\":
                quote = ""
        elif ch in "\"'":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    last = text[start:].strip()
    if last:
        parts.append(last)
    return parts


def _value(text: str):
    """Parse one argument of a trace line: int, float, list, string, bool/None or an RV name."""
    if text.startswith("["):
        return [_value(item) for item in _split_top_level(text[1:-1])]
    if text[:1] in "\"'":
        return text[1:-1]
    if text in ("True", "False", "None"):
        return {"True": True, "False": False, "None": None}[text]
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return text  # an RV name (b0, l1, v2) or an expression we do not interpret


def parse_trace(text: str) -> list[tuple[str, list, dict, list[str]]]:
    """Parse a trace's Python form up to post-processing.

    Returns
    -------
    list of (method, positional args, keyword args, output RV names)
    """
    calls = []
    for line in text.splitlines():
        match = _LINE.match(line)
        if match is None:
            continue
        method = match["method"]
        if method == "enter_postproc":
            break
        args, kwargs = [], {}
        for part in _split_top_level(match["args"]):
            key, sep, rest = part.partition("=")
            if sep and _IDENT.match(key.strip()) and not rest.startswith("="):
                kwargs[key.strip()] = _value(rest.strip())
            else:
                args.append(_value(part))
        outputs = [name.strip() for name in (match["outputs"] or "").split(",") if name.strip()]
        calls.append((method, args, kwargs, outputs))
    return calls


@dataclass
class _Loop:
    origin: int | None          # node id of the original loop, if known
    factor: int | None = None   # extent after a split, if known
    block: str | None = None
    level: int = 0              # which piece of a split (0 = outermost)


@dataclass(frozen=True)
class _RFactorBlock:
    """The block that ``rfactor`` created from the reduction block ``of``."""

    of: str


class _TraceReader:
    """Replays a parsed trace symbolically and fills one configuration's feature matrix."""

    def __init__(self, graph: TaskGraph, rows: dict[int, int]) -> None:
        self.graph = graph
        self.rows = rows
        self.feat = np.zeros((len(rows), F_CONFIG), dtype=np.float32)
        self.rv: dict[str, object] = {}
        self.fresh = set(graph.blocks)      # blocks whose loops are still the original ones
        self.new_neighbours: set[str] = set()  # blocks that got a cache or rfactor stage
        self.orders: dict[str, list[str]] = {}  # block -> loop RVs of its last reorder

    def set(self, node: int | None, column: str, value: float, add: bool = False) -> None:
        if node is None:
            return
        row, col = self.rows[node], _C[column]
        self.feat[row, col] = self.feat[row, col] + value if add else value

    def block_node(self, rv_name) -> int | None:
        block = self.rv.get(rv_name)
        if block == "root":
            return self.graph.root
        if isinstance(block, _RFactorBlock):
            block = block.of
        return self.graph.blocks.get(block) if isinstance(block, str) else None

    def read(self, calls) -> np.ndarray:
        for method, args, kwargs, outputs in calls:
            handler = getattr(self, "_" + method, None)
            if handler is not None:
                handler(args, kwargs, outputs)
            elif method in _STRUCTURAL_INSTRUCTIONS:
                for name in outputs:
                    self.rv[name] = _Loop(None) if name.startswith("l") else None
            else:
                raise UnsupportedProgramError(
                    f"trace instruction sch.{method} is not supported by the TIR converter"
                )
        return self.feat

    # Lookups ---------------------------------------------------------------------------
    def _get_sblock(self, args, kw, outputs):
        name = kw["name"]
        self.rv[outputs[0]] = "root" if name == "root" else (name if name in self.graph.blocks else None)

    _get_block = _get_sblock

    def _get_loops(self, args, kw, outputs):
        block = self.rv.get(kw["block"])
        original = self.graph.block_loops.get(block, []) if block in self.fresh else []
        for i, name in enumerate(outputs):
            origin = original[i] if len(original) == len(outputs) else None
            extent = self.graph.loop_extent.get(origin)
            self.rv[name] = _Loop(origin, extent, block if isinstance(block, str) else None)

    def _relatives(self, kw, outputs, table) -> None:
        block = self.rv.get(kw["block"])
        if isinstance(block, str) and block in self.new_neighbours:
            found = [_RFactorBlock(block)] if table is self.graph.producers else []
        else:
            found = table.get(block, []) if isinstance(block, str) else []
        for i, name in enumerate(outputs):
            self.rv[name] = found[i] if len(found) == len(outputs) else None

    def _get_consumers(self, args, kw, outputs):
        self._relatives(kw, outputs, self.graph.consumers)

    def _get_producers(self, args, kw, outputs):
        self._relatives(kw, outputs, self.graph.producers)

    # Sampling --------------------------------------------------------------------------
    def _sample_perfect_tile(self, args, kw, outputs):
        loop = self.rv.get(kw["loop"])
        factors = [int(f) for f in kw.get("decision") or []]
        for name, factor in zip(outputs, factors):
            self.rv[name] = factor
        if isinstance(loop, _Loop) and factors:
            self.set(loop.origin, "loop_tiled", 1.0)
            self.set(loop.origin, "loop_tile_levels", len(factors) / 4)
            for level, factor in enumerate(factors[:4]):
                self.set(loop.origin, f"loop_tile_{level}", math.log2(max(factor, 1)) / 8)
            self.set(loop.origin, "loop_tile_innermost", math.log2(max(factors[-1], 1)) / 8)

    def _sample_categorical(self, args, kw, outputs):
        decision = kw.get("decision")
        if isinstance(decision, int):
            self.rv[outputs[0]] = kw["candidates"][decision]

    def _sample_compute_location(self, args, kw, outputs):
        decision = kw.get("decision")
        column = "block_rf_sampled_location" if isinstance(self.rv.get(kw["block"]), _RFactorBlock) \
            else "block_sampled_location"
        if isinstance(decision, int):
            self.set(self.block_node(kw["block"]), column, (decision + 2) / 8)
        self.rv[outputs[0]] = _Loop(None)

    # Loop transformations --------------------------------------------------------------
    def _split(self, args, kw, outputs):
        loop = self.rv.get(kw["loop"])
        origin = loop.origin if isinstance(loop, _Loop) else None
        block = loop.block if isinstance(loop, _Loop) else None
        self.fresh.discard(block)
        for level, (name, factor) in enumerate(zip(outputs, kw.get("factors") or [])):
            value = self.rv.get(factor) if isinstance(factor, str) else factor
            self.rv[name] = _Loop(origin, value if isinstance(value, int) else None, block, level)

    def _fuse(self, args, kw, outputs):
        """The fused loop stands for its outermost part (later tiling lands there)."""
        extent, block, origin = 1, None, None
        for name in args:
            loop = self.rv.get(name)
            if isinstance(loop, _Loop):
                self.set(loop.origin, "loop_fused", 1.0)
                block = block or loop.block
                origin = origin if origin is not None else loop.origin
                extent = extent * loop.factor if extent and loop.factor else None
        self.fresh.discard(block)
        self.rv[outputs[0]] = _Loop(origin, extent, block)

    def _reorder(self, args, kw, outputs):
        blocks = {loop.block for loop in map(self.rv.get, args) if isinstance(loop, _Loop) and loop.block}
        for block in blocks:
            self.orders[block] = list(args)
            self.fresh.discard(block)

    def _loop_flag(self, kw, column) -> None:
        loop = self.rv.get(kw["loop"])
        if isinstance(loop, _Loop):
            self.set(loop.origin, column, 1.0)

    def _parallel(self, args, kw, outputs):
        self._loop_flag(kw, "loop_parallel")

    def _vectorize(self, args, kw, outputs):
        self._loop_flag(kw, "loop_vectorize")

    def _unroll(self, args, kw, outputs):
        self._loop_flag(kw, "loop_unroll")

    # Block transformations -------------------------------------------------------------
    def _attach(self, kw, column: str) -> None:
        block = self.rv.get(kw["block"])
        if isinstance(block, _RFactorBlock):
            column = "block_rf_compute_at"
        node = self.block_node(kw["block"])
        self.set(node, column, 1.0)
        self.fresh.discard(block)
        loop_name = kw["loop"]
        loop = self.rv.get(loop_name)
        order = self.orders.get(loop.block, []) if isinstance(loop, _Loop) else []
        if loop_name not in order or column == "block_rf_compute_at":
            return
        position = order.index(loop_name)
        inner = sum(
            math.log2(inner_loop.factor)
            for inner_loop in map(self.rv.get, order[position + 1:])
            if isinstance(inner_loop, _Loop) and inner_loop.factor
        )
        self.set(node, "block_attach_inner_volume", inner / 16)
        self.set(node, "block_attach_position", (position + 1) / 8)

    def _compute_at(self, args, kw, outputs):
        self._attach(kw, "block_compute_at")

    def _reverse_compute_at(self, args, kw, outputs):
        self._attach(kw, "block_reverse_compute_at")

    def _compute_inline(self, args, kw, outputs):
        self.set(self.block_node(kw["block"]), "block_inlined", 1.0)

    def _reverse_compute_inline(self, args, kw, outputs):
        self.set(self.block_node(kw["block"]), "block_reverse_inlined", 1.0)

    def _cache_stage(self, kw, outputs, column: str, value: float) -> None:
        block = self.rv.get(kw["block"])
        self.set(self.block_node(kw["block"]), column, value, add=True)
        if isinstance(block, str):
            self.new_neighbours.add(block)
        self.rv[outputs[0]] = block

    def _cache_write(self, args, kw, outputs):
        self._cache_stage(kw, outputs, "block_cache_write", 1.0)

    def _cache_read(self, args, kw, outputs):
        self._cache_stage(kw, outputs, "block_cache_read", 0.25)

    def _rfactor(self, args, kw, outputs):
        loop = self.rv.get(kw["loop"])
        if not isinstance(loop, _Loop) or loop.block is None:
            self.rv[outputs[0]] = None
            return
        self.set(loop.origin, "loop_rfactor", (loop.level + 1) / 4)
        self.set(self.graph.blocks.get(loop.block), "block_rfactor", 1.0)
        self.new_neighbours.add(loop.block)
        self.fresh.discard(loop.block)
        self.rv[outputs[0]] = _RFactorBlock(loop.block)

    _ROOT_ANNOTATIONS = {
        "meta_schedule.parallel": ("root_parallel", 8),
        "meta_schedule.vectorize": ("root_vectorize", 8),
        "meta_schedule.unroll_explicit": ("root_unroll_explicit", 10),
        "meta_schedule.unroll_implicit": ("root_unroll_implicit", 10),
    }

    def _annotate(self, args, kw, outputs):
        target, key, value = kw["block_or_loop"], kw["ann_key"], kw["ann_val"]
        value = self.rv.get(value, value) if isinstance(value, str) else value
        column = self._ROOT_ANNOTATIONS.get(key)
        if self.rv.get(target) == "root" and column is not None and isinstance(value, int):
            self.set(self.graph.root, column[0], _log2p(value) / column[1])
        elif key == "meta_schedule.tiling_structure":
            self.set(self.block_node(target), "block_multi_level_tiled", 1.0)
        else:
            self.set(self.graph.root, "root_annotations", 0.125, add=True)


def trace_config_features(graph: TaskGraph, trace) -> np.ndarray:
    """Configuration features of one candidate.

    Parameters
    ----------
    graph : TaskGraph
        The task's static graph (:func:`task_graph`).
    trace : tvm.s_tir.Trace or str
        The candidate's trace, or its Python form ``str(trace)``.

    Returns
    -------
    np.ndarray
        ``(nc, F_CONFIG)`` float32, rows in the order of ``graph.config_node_ids``.

    Raises
    ------
    UnsupportedProgramError
        For a trace instruction the converter does not know (the message names it).
    """
    return _TraceReader(graph, graph.config_row()).read(parse_trace(str(trace)))


def store_features(per_store: np.ndarray) -> np.ndarray:
    """Pool one candidate's ``PerStoreFeature`` rows to a fixed-size global vector.

    Shapes: ``per_store`` ``(stores, 164)`` -> ``(F_GLOBAL,)`` = mean, max, log2(1 + stores).
    """
    if per_store.shape[0] == 0:
        return np.zeros(F_GLOBAL, dtype=np.float32)
    pooled = [per_store.mean(axis=0), per_store.max(axis=0), [_log2p(per_store.shape[0])]]
    return np.concatenate(pooled).astype(np.float32)


class TirConverter:
    """Converts MetaSchedule candidates of any task to configured graphs.

    The static graph of each task is built once and cached by the task's structural hash;
    each candidate's features are cached by its task and trace text (evolutionary search
    scores the same candidate many times). ``PerStoreFeature`` (TVM's C++ extractor, the one
    XGBoost uses) supplies the global features.

    Parameters
    ----------
    cache_size : int
        Candidates whose features are kept (default 20,000, about 40 MB).
    """

    def __init__(self, cache_size: int = 20_000) -> None:
        from tvm.s_tir.meta_schedule.feature_extractor import PerStoreFeature

        self._graphs: dict[str, TaskGraph] = {}
        self._store_extractor = PerStoreFeature()
        self._cache: OrderedDict[tuple[str, str], tuple[np.ndarray, np.ndarray]] = OrderedDict()
        self.cache_size = cache_size

    def graph_for(self, mod) -> TaskGraph:
        """The cached static graph of a task's workload module."""
        from tvm.s_tir.meta_schedule.utils import shash2hex

        return self._graph_by_key(shash2hex(mod), mod)

    def _graph_by_key(self, key: str, mod) -> TaskGraph:
        if key not in self._graphs:
            self._graphs[key] = task_graph(mod)
        return self._graphs[key]

    def convert(self, context, candidates, runtime: np.ndarray | None = None) -> ConfiguredGraph:
        """Convert candidates of the task of ``context`` to one configured graph.

        Parameters
        ----------
        context : ms.TuneContext
            The task (``context.mod``) and target.
        candidates : list of ms.MeasureCandidate
            ``c`` candidates of that task.
        runtime : np.ndarray, optional
            ``(c,)`` measured latencies to attach.

        Returns
        -------
        ConfiguredGraph
            ``config_feat`` ``(c, nc, F_CONFIG)``, ``global_feat`` ``(c, F_GLOBAL)``.

        Raises
        ------
        UnsupportedProgramError
            If the task's program or a candidate's trace cannot be converted.
        """
        from tvm.s_tir.meta_schedule.utils import shash2hex

        task = shash2hex(context.mod)
        graph = self._graph_by_key(task, context.mod)
        # Two tasks can print the same trace (an element-wise op at two shapes): the
        # per-store features differ, so a candidate is known by (task, trace).
        keys = [(task, str(cand.sch.trace)) for cand in candidates]
        missing = [i for i, key in enumerate(keys) if key not in self._cache]
        if missing:
            per_store = self._store_extractor.extract_from(context, [candidates[i] for i in missing])
            for i, stores in zip(missing, per_store):
                config = _TraceReader(graph, graph.config_row()).read(parse_trace(keys[i][1]))
                self._cache[keys[i]] = (config, store_features(stores.numpy()))
        rows = []
        for key in keys:
            self._cache.move_to_end(key)
            rows.append(self._cache[key])
        while len(self._cache) > self.cache_size:
            self._cache.popitem(last=False)
        nc = len(graph.config_node_ids)
        config = np.stack([r[0] for r in rows]) if rows else np.zeros((0, nc, F_CONFIG), np.float32)
        global_feat = np.stack([r[1] for r in rows]) if rows else np.zeros((0, F_GLOBAL), np.float32)
        return ConfiguredGraph(
            node_kind=graph.node_kind, node_feat=graph.node_feat, edge_index=graph.edge_index,
            config_node_ids=graph.config_node_ids, config_feat=config, global_feat=global_feat,
            runtime=runtime, name=str(context.task_name or ""),
        )
