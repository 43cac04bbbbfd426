"""search.layout: the layout search measures only what the network ranks first."""

from __future__ import annotations

import torch

from search.layout import layout_search
from tvm_tgraph.convert.relax_layout import FEATURE_SCHEMA, LayoutSpace
from tvm_tgraph.model_zoo import MODELS, to_relax
from tvm_tgraph.nn import TGraphConfig, TGraphNet


def test_layout_search_measures_only_the_top_k_of_the_pool():
    """With a stand-in measurement (a function of the configuration), the search measures
    exactly top_k configurations, all of them from the pool, and returns the fastest."""
    space = LayoutSpace(to_relax(*MODELS["resnet"](width=4, image=8)))
    torch.manual_seed(0)
    model = TGraphNet(TGraphConfig.from_schema(FEATURE_SCHEMA, hidden=8, num_blocks=1, heads=2))
    measured = []

    def measure(config):
        measured.append("".join(map(str, config)))
        return 1.0 + config.sum()

    result = layout_search(space, model, measure, pool_size=16, top_k=3, progress=False)
    assert len(measured) == 3 == len(result.measured) and result.pool_size <= 16
    assert result.best_latency_s == min(latency for _, latency in result.measured)
    assert result.best_latency_s == 1.0 + result.best_config.sum()
