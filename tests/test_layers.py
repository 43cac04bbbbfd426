"""Data flows converter -> configured graph -> network: the network imports no TVM, the
converters import no torch."""

from __future__ import annotations

import subprocess
import sys

import pytest


@pytest.mark.parametrize("modules, forbidden", [
    (["tvm_tgraph.nn", "tvm_tgraph.graph"], "tvm"),
    (["tvm_tgraph.convert.tir", "tvm_tgraph.convert.tpugraphs", "tvm_tgraph.convert.relax_layout"], "torch"),
])
def test_layer_does_not_import(modules, forbidden):
    code = (f"import sys\nimport {', '.join(modules)}\n"
            f"print(sorted(m for m in sys.modules if m == {forbidden!r} or m.startswith({forbidden + '.'!r})))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]", f"{modules} imported {out.strip()[:200]}"


def test_a_network_is_sized_from_a_converters_schema():
    from tvm_tgraph.convert.tir import F_CONFIG, F_GLOBAL, F_NODE, FEATURE_SCHEMA, NODE_KINDS
    from tvm_tgraph.nn import TGraphConfig

    config = TGraphConfig.from_schema(FEATURE_SCHEMA, hidden=32)
    assert (config.num_node_kinds, config.node_features, config.config_features, config.global_features,
            config.hidden) == (len(NODE_KINDS), F_NODE, F_CONFIG, F_GLOBAL, 32)
