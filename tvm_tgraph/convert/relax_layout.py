"""Layout configurations of a Relax model, and their configured graphs.

The model's operator graph (one node per binding of ``main``'s dataflow block, plus its
parameters) is shared by every configuration. The configurable operators are those with a
layout choice:

- ``nn.conv2d``, ``nn.max_pool2d``, ``nn.avg_pool2d``: NCHW (as imported) or NHWC;
- ``matmul(x, permute_dims(W))`` with a constant 2-d ``W`` (a PyTorch ``Linear``): the
  weight pre-transposed, as imported, or read as stored (``topi.nn.dense``).

A configuration is one choice per configurable operator. :meth:`LayoutSpace.apply` rewrites
each operator on its own and inserts ``permute_dims`` only where a tensor's layout differs
from what its consumer needs: layouts propagate through batch norm, element-wise operators
and global pooling, and a transpose to NCHW is shared by all the consumers that need it.
:meth:`LayoutSpace.plan` computes the same decisions without building anything; they are
also the configuration features the network sees (choice, transposed input, transposed
output).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import UnsupportedProgramError
from ..graph import ConfiguredGraph, FeatureSchema

FEATURE_SCHEMA_VERSION = "relax-layout-1"
NCHW, NHWC = 0, 1
TO_NHWC, TO_NCHW = (0, 2, 3, 1), (0, 3, 1, 2)

_SITE_OPS = ("relax.nn.conv2d", "relax.nn.max_pool2d", "relax.nn.avg_pool2d")
_UNARY = ("relax.nn.relu", "relax.clip", "relax.nn.gelu", "relax.nn.silu", "relax.sigmoid", "relax.tanh")
_BINARY = ("relax.add", "relax.subtract", "relax.multiply", "relax.divide", "relax.maximum", "relax.minimum")
#: Node kinds: the operators of the model families here; anything else is "other".
NODE_KINDS = ("other", "param", "const", "relax.nn.conv2d", "relax.nn.max_pool2d", "relax.nn.avg_pool2d",
              "relax.matmul", "relax.nn.batch_norm", "tuple_get", *_UNARY, *_BINARY, "relax.mean",
              "relax.permute_dims", "relax.reshape", "relax.nn.softmax", "relax.nn.layer_norm")
NODE_FEATURES = 11    # log2 of 5 padded output dims, rank, log2 numel, kernel h, stride, groups, channels
CONFIG_FEATURES = 3   # choice, input transposed, output transposed
GLOBAL_FEATURES = 2   # log2(1 + transposes), share of sites on the alternative choice
#: The widths of this converter's graphs (size a network with ``TGraphConfig.from_schema``).
FEATURE_SCHEMA = FeatureSchema(FEATURE_SCHEMA_VERSION, len(NODE_KINDS), NODE_FEATURES, CONFIG_FEATURES,
                               GLOBAL_FEATURES)


@dataclass
class _Binding:
    var: object          # relax.Var bound
    value: object        # its value (Call, TupleGetItem, Tuple, ...)
    kind: str            # an entry of NODE_KINDS or an operator name
    inputs: list         # indices of the bindings it reads (-1 - p for parameter p)
    site: int            # index among the configurable operators, -1 if none


def _op_name(value) -> str:
    import tvm
    from tvm import relax

    if isinstance(value, relax.Call) and isinstance(value.op, tvm.ir.Op):
        return value.op.name
    if isinstance(value, relax.TupleGetItem):
        return "tuple_get"
    return type(value).__name__


def _shape(var) -> list[int]:
    info = var.ty
    if not hasattr(info, "shape") or info.shape is None:
        return []
    try:
        return [int(d) for d in info.shape]
    except (TypeError, ValueError) as err:
        raise UnsupportedProgramError(f"layout search needs static shapes, {var.name} has {info.shape}") from err


class LayoutSpace:
    """The layout choices of a Relax model (``mod["main"]``, one dataflow block).

    Attributes
    ----------
    sites : list[int]
        Binding index of each configurable operator.
    """

    def __init__(self, mod) -> None:
        from tvm import relax

        self.mod = mod
        func = mod["main"]
        blocks = func.body.blocks
        if len(blocks) != 1 or not isinstance(blocks[0], relax.DataflowBlock):
            raise UnsupportedProgramError("layout search needs main to be one dataflow block "
                                          f"(found {len(blocks)} blocks)")
        self.func = func
        self.params = list(func.params)
        index = {p: -1 - i for i, p in enumerate(self.params)}
        self.bindings: list[_Binding] = []
        for binding in blocks[0].bindings:
            value = binding.value
            inputs = [index[v] for v in _vars_read(value) if v in index]
            kind = _op_name(value)
            binding_index = len(self.bindings)
            self.bindings.append(_Binding(binding.var, value, kind, inputs, -1))
            index[binding.var] = binding_index
        self.output_inputs = [index[v] for v in _vars_read(func.body.body) if v in index]
        self.sites = [i for i, b in enumerate(self.bindings) if self._is_site(i)]
        for site, i in enumerate(self.sites):
            self.bindings[i].site = site
        if not self.sites:
            raise UnsupportedProgramError("the model has no operator with a layout choice "
                                          "(conv2d, pooling, matmul with a constant weight)")

    # --- analysis -------------------------------------------------------------------------
    def _is_site(self, i: int) -> bool:
        binding = self.bindings[i]
        if binding.kind in _SITE_OPS:
            return binding.value.attrs.data_layout == "NCHW" if binding.kind.endswith("conv2d") \
                else binding.value.attrs.layout == "NCHW"
        return binding.kind == "relax.matmul" and self._transposed_weight(i) is not None

    def _transposed_weight(self, i: int):
        """For ``matmul(x, permute_dims(W, [1, 0]))`` with constant 2-d W and 2-d x: W."""
        from tvm.ir.expr import Constant

        a, b = self.bindings[i].value.args
        producer = next((p for p in self.bindings if p.var.same_as(b)), None)
        if producer is None or producer.kind != "relax.permute_dims" or len(_shape(a)) != 2:
            return None
        weight = producer.value.args[0]
        axes = producer.value.attrs.axes
        if isinstance(weight, Constant) and len(_shape(weight)) == 2 and [int(x) for x in axes] == [1, 0]:
            return weight
        return None

    @property
    def num_sites(self) -> int:
        return len(self.sites)

    def site_names(self) -> list[str]:
        return [f"{self.bindings[i].var.name}:{self.bindings[i].kind.split('.')[-1]}" for i in self.sites]

    def random_configs(self, count: int, rng: np.random.Generator, exclude=()) -> np.ndarray:
        """``(m, sites)`` int8: up to ``count`` distinct random configurations not in ``exclude``."""
        seen = {tuple(c) for c in exclude}
        total = 2 ** self.num_sites
        out = []
        while len(out) < count and len(seen) < total:
            config = tuple(int(x) for x in rng.integers(0, 2, self.num_sites))
            if config not in seen:
                seen.add(config)
                out.append(config)
        return np.array(out, dtype=np.int8).reshape(-1, self.num_sites)

    # --- the layout plan ------------------------------------------------------------------
    def plan(self, config) -> dict:
        """Where each tensor lives and where transposes go, for one configuration.

        Returns
        -------
        dict
            ``layout``: per binding NCHW/NHWC; ``to_nhwc``: bindings (or params, negative)
            transposed to NHWC for a consumer; ``to_nchw``: NHWC bindings transposed back.
        """
        config = np.asarray(config)
        if config.shape != (self.num_sites,):
            raise ValueError(f"a configuration has {self.num_sites} choices, got shape {config.shape}")
        layout = {}
        to_nhwc, to_nchw = set(), set()

        def lay(j):
            return layout.get(j, NCHW)

        def need_nchw(j):
            if lay(j) == NHWC:
                to_nchw.add(j)

        for i, b in enumerate(self.bindings):
            if b.site >= 0 and b.kind in _SITE_OPS:
                data = b.inputs[0] if b.inputs else None
                if config[b.site] == NHWC:
                    if data is not None and lay(data) != NHWC:
                        to_nhwc.add(data)
                    layout[i] = NHWC
                else:
                    if data is not None:
                        need_nchw(data)
            elif _keeps_nhwc(b, lay):
                layout[i] = NHWC
            elif b.kind == "tuple_get" or (b.kind == "relax.mean" and b.inputs and lay(b.inputs[0]) == NHWC
                                            and _is_global_pool(b.value)):
                pass  # a tuple's other fields are not images; the global mean reads NHWC directly
            else:
                for j in b.inputs:
                    need_nchw(j)
        for j in self.output_inputs:
            need_nchw(j)
        return {"layout": layout, "to_nhwc": to_nhwc, "to_nchw": to_nchw}

    def config_features(self, configs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(c, sites, 3)`` site features and ``(c, 2)`` global features of ``configs``."""
        configs = np.asarray(configs).reshape(-1, self.num_sites)
        site_feat = np.zeros((len(configs), self.num_sites, CONFIG_FEATURES), np.float32)
        global_feat = np.zeros((len(configs), GLOBAL_FEATURES), np.float32)
        for row, config in enumerate(configs):
            plan = self.plan(config)
            for site, i in enumerate(self.sites):
                data = self.bindings[i].inputs[0] if self.bindings[i].inputs else None
                site_feat[row, site] = (config[site], data in plan["to_nhwc"] or (
                    config[site] == NCHW and data in plan["to_nchw"]), i in plan["to_nchw"])
            global_feat[row] = (np.log2(1 + len(plan["to_nhwc"]) + len(plan["to_nchw"])), config.mean())
        return site_feat, global_feat

    def configured_graph(self, configs: np.ndarray, runtime: np.ndarray | None = None, name: str = "") -> ConfiguredGraph:
        """The operator graph with ``configs`` ``(c, sites)`` as its configurations."""
        kinds, feats, edges = [], [], []
        for p in self.params:
            kinds.append(NODE_KINDS.index("param"))
            feats.append(_node_features(_shape(p), None))
        offset = len(self.params)
        for i, b in enumerate(self.bindings):
            kinds.append(NODE_KINDS.index(b.kind) if b.kind in NODE_KINDS else 0)
            feats.append(_node_features(_shape(b.var), b.value))
            for j in b.inputs:
                edges.append((j + offset if j >= 0 else -1 - j, i + offset))
        site_feat, global_feat = self.config_features(configs)
        return ConfiguredGraph(
            node_kind=np.array(kinds, np.int64), node_feat=np.array(feats, np.float32),
            edge_index=np.array(edges, np.int64).T.reshape(2, -1),
            config_node_ids=np.array(self.sites, np.int64) + offset, config_feat=site_feat,
            global_feat=global_feat, runtime=runtime, name=name,
        )

    # --- the rewrite ------------------------------------------------------------------------
    def apply(self, config):
        """The model with ``config``'s layouts: a new IRModule computing the same function."""
        from tvm import relax

        config = np.asarray(config)
        plan = self.plan(config)
        bb = relax.BlockBuilder()
        new = {}         # binding index (or -1 - param) -> relax expr
        nhwc_of = {}     # index -> its NHWC transpose (shared by consumers)
        nchw_of = {}     # index -> its NCHW transpose

        def value_of(j, want=None):
            lay = plan["layout"].get(j, NCHW)
            if want == NHWC and lay != NHWC:
                if j not in nhwc_of:
                    nhwc_of[j] = bb.emit(relax.op.permute_dims(new[j], TO_NHWC))
                return nhwc_of[j]
            if want == NCHW and lay == NHWC:
                if j not in nchw_of:
                    nchw_of[j] = bb.emit(relax.op.permute_dims(new[j], TO_NCHW))
                return nchw_of[j]
            return new[j]

        with bb.function("main", self.params):
            for p_index, p in enumerate(self.params):
                new[-1 - p_index] = p
            with bb.dataflow():
                var_index = {p: -1 - k for k, p in enumerate(self.params)}
                for i, b in enumerate(self.bindings):
                    var_index[b.var] = i
                    new[i] = bb.emit(self._rewrite(i, b, config, plan, value_of, var_index))
                output = _substitute(self.func.body.body, {
                    v: value_of(j, NCHW) for v, j in var_index.items() if j in self.output_inputs})
                gv = bb.emit_output(output)
            bb.emit_func_output(gv)
        return bb.get()

    def _rewrite(self, i, b, config, plan, value_of, var_index):
        """Binding ``i``'s new value; ``value_of(j, layout)`` gives input ``j`` in a layout."""
        from tvm import relax, topi

        value = b.value
        nhwc_out = plan["layout"].get(i, NCHW) == NHWC
        if b.site >= 0 and b.kind == "relax.matmul":
            if config[b.site] == 1:
                return topi_call(topi.nn.dense, value_of(b.inputs[0], NCHW), self._transposed_weight(i))
            return _substitute(value, {v: value_of(j, NCHW) for v, j in var_index.items() if j in b.inputs})
        if b.site >= 0 and b.kind == "relax.nn.conv2d" and config[b.site] == NHWC:
            a = value.attrs
            weight = relax.op.permute_dims(value.args[1], (2, 3, 1, 0))     # OIHW -> HWIO
            return relax.op.nn.conv2d(value_of(b.inputs[0], NHWC), weight, a.strides, a.padding, a.dilation,
                                      a.groups, "NHWC", "HWIO", "NHWC", a.out_dtype)
        if b.site >= 0 and b.kind in ("relax.nn.max_pool2d", "relax.nn.avg_pool2d") and config[b.site] == NHWC:
            a = value.attrs
            pool = relax.op.nn.max_pool2d if b.kind.endswith("max_pool2d") else relax.op.nn.avg_pool2d
            return pool(value_of(b.inputs[0], NHWC), a.pool_size, a.strides, a.padding, a.dilation, a.ceil_mode,
                        a.count_include_pad, "NHWC", "NHWC")
        if nhwc_out and b.kind == "relax.nn.batch_norm":
            a = value.attrs
            return relax.op.nn.batch_norm(value_of(b.inputs[0], NHWC), *value.args[1:], axis=3, epsilon=a.epsilon,
                                          center=a.center, scale=a.scale, momentum=a.momentum,
                                          training=a.training)
        if nhwc_out or (b.kind == "tuple_get"):
            return _substitute(value, {v: value_of(j) for v, j in var_index.items() if j in b.inputs})
        if b.kind == "relax.mean" and b.inputs and plan["layout"].get(b.inputs[0], NCHW) == NHWC:
            return relax.op.mean(value_of(b.inputs[0], NHWC), axis=[1, 2], keepdims=False)
        return _substitute(value, {v: value_of(j, NCHW) for v, j in var_index.items() if j in b.inputs})


def topi_call(compute, *args):
    """A ``call_tir`` of a TOPI compute over relax arguments (lowered by the BlockBuilder)."""
    from tvm import relax

    return relax.BlockBuilder.current().call_te(compute, *args)


def _vars_read(expr) -> list:
    from tvm import relax

    found = []
    relax.analysis.post_order_visit(expr, lambda e: found.append(e) if isinstance(e, relax.Var) else None)
    return list(dict.fromkeys(found))


def _substitute(expr, mapping: dict):
    """``expr`` with the variables of ``mapping`` replaced by their values."""
    from tvm import relax

    @relax.expr_functor.mutator
    class Rebind(relax.PyExprMutator):
        def visit_var_(self, var):
            return mapping.get(var, var)

        def visit_dataflow_var_(self, var):
            return mapping.get(var, var)

    return Rebind().visit_expr(expr)


def _keeps_nhwc(b: _Binding, lay) -> bool:
    """Whether binding ``b`` can compute in NHWC from its inputs' layouts ``lay(j)``."""
    if not b.inputs or any(lay(j) != NHWC for j in b.inputs):
        return False
    if b.kind == "relax.nn.batch_norm" or b.kind in _UNARY:
        return _is_4d_axis1(b)
    if b.kind == "tuple_get":
        return b.value.index == 0
    return b.kind in _BINARY and _constants_are_scalars(b.value)


def _is_4d_axis1(b) -> bool:
    shape = _shape(b.var) if b.kind != "relax.nn.batch_norm" else _shape(b.value.args[0])
    return len(shape) == 4 and (b.kind != "relax.nn.batch_norm" or int(b.value.attrs.axis) == 1)


def _constants_are_scalars(value) -> bool:
    from tvm.ir.expr import Constant

    return all(len(_shape(a)) == 0 for a in value.args if isinstance(a, Constant))


def _is_global_pool(value) -> bool:
    axes = value.attrs.axis
    return axes is not None and sorted(int(a) for a in axes) == [2, 3] and not value.attrs.keepdims \
        and len(_shape(value.args[0])) == 4


def _node_features(shape: list[int], value) -> list[float]:
    dims = (list(shape) + [0] * 5)[:5]
    kernel = stride = groups = channels = 0.0
    if value is not None and _op_name(value) in _SITE_OPS:
        attrs = value.attrs
        if hasattr(attrs, "groups"):
            kernel = float(_shape(value.args[1])[2])
            groups = float(attrs.groups)
            channels = float(_shape(value.args[1])[1])
        else:
            kernel = float(attrs.pool_size[0])
        stride = float(attrs.strides[0])
    numel = float(np.prod(shape)) if shape else 1.0
    return [*np.log2(1 + np.array(dims, float)), len(shape), np.log2(numel), kernel, stride, np.log2(1 + groups),
            np.log2(1 + channels)]
