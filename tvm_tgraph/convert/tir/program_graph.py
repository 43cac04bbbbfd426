"""The static graph of a task: its unscheduled PrimFunc's root, blocks, loops and buffers.

Nodes: the root block, every block, every loop, every buffer. Edges: loop nesting (root ->
outer loop -> ... -> inner loop -> block), buffer -> block for reads, block -> buffer for
writes. Built once per task; every candidate of the task shares it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ...errors import UnsupportedProgramError
from .schema import F_NODE, KIND, NODE_FEATURES, log2p

_ARITH = frozenset({"Add", "Sub", "Mul", "Div", "FloorDiv", "FloorMod", "Mod"})
_MINMAX = frozenset({"Max", "Min", "Select"})


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
            kind, log_buffer_size=log2p(math.prod(shape)) / 16, buffer_ndim=len(shape) / 4,
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
            node = self.add_node("loop_spatial", log_extent=log2p(extent) / 16, depth=len(loops) / 8)
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
            kind, log_extent=log2p(spatial) / 16, log_reduce_extent=log2p(reduce) / 16,
            num_iter_vars=len(extents) / 8, depth=len(loops) / 8,
            num_reads=len(block.reads) / 4, num_writes=len(block.writes) / 4,
            has_init=float(block.init is not None),
            log_num_arith=log2p(counts["arith"]) / 4, log_num_minmax=log2p(counts["minmax"]) / 4,
            log_num_calls=log2p(counts["call"]) / 4, log_num_loads=log2p(counts["load"]) / 4,
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
