"""A candidate's trace -> its configuration features.

A trace is read in its Python form (``str(trace)``, one ``sch.<method>(...)`` call a line):
TVM prints it in C++ about 8x faster than ``Trace.as_json()`` serialises it. The reader
replays the calls symbolically on the task graph and writes each decision (tile factors,
compute-at and its depth, inlining, cache stages, rfactor, fusion, parallel / vectorize /
unroll) into the columns of the node it concerns.
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass

import numpy as np

from ...errors import UnsupportedProgramError
from .program_graph import TaskGraph
from .schema import CONFIG_COLUMN, F_CONFIG, log2p

# Trace instructions (as ``sch.<method>`` in a trace's Python form) that carry no choice of
# their own: lookups, or steps fully determined by the choices the reader does record.
_STRUCTURAL_INSTRUCTIONS = frozenset({
    "get_child_blocks", "unannotate", "decompose_reduction", "transform_layout", "bind",
    "storage_align", "set_scope", "add_unit_loop", "set_axis_separator",
})

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
        Shared with every other trace holding the same line (see :func:`_parse_line`):
        read them, never change them.
    """
    calls = []
    for line in text.splitlines():
        call = _parse_line(line)
        if call is None:
            continue
        if call[0] == "enter_postproc":
            break
        calls.append(call)
    return calls


@functools.lru_cache(maxsize=1 << 16)
def _parse_line(line: str) -> tuple[str, list, dict, list[str]] | None:
    """One trace line's ``(method, positional args, keyword args, output RV names)``, or
    None for a line that is no ``sch.<method>(...)`` call. Kept by the line's text: the
    candidates of one task repeat most of their lines (lookups, structural steps, the same
    sampled decisions; about 7% of the lines of 900 random candidates of three operators
    are distinct), so most lines are parsed once."""
    match = _LINE.match(line)
    if match is None:
        return None
    args, kwargs = [], {}
    for part in _split_top_level(match["args"]):
        key, sep, rest = part.partition("=")
        if sep and _IDENT.match(key.strip()) and not rest.startswith("="):
            kwargs[key.strip()] = _value(rest.strip())
        else:
            args.append(_value(part))
    outputs = [name.strip() for name in (match["outputs"] or "").split(",") if name.strip()]
    return match["method"], args, kwargs, outputs


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
        row, col = self.rows[node], CONFIG_COLUMN[column]
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
            self.set(self.graph.root, column[0], log2p(value) / column[1])
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
