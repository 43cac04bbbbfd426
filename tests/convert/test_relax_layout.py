"""Layout configurations of a real Relax model: the rewrite computes the same function,
the plan puts transposes only where layouts differ, and collect/train/eval/search run."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from tvm_tgraph.cli import main
from tvm_tgraph.convert.relax_layout import LayoutSpace
from tvm_tgraph.errors import RecordError, UnsupportedProgramError
from tvm_tgraph.model_zoo import MODELS, to_relax
from tvm_tgraph.workflows.end_to_end import compile_default, random_inputs, run_and_time
from tvm_tgraph.workflows.layout import read_measurements

TINY = "from tvm_tgraph.model_zoo import MODELS, to_relax\ndef tiny():\n    return to_relax(*MODELS['resnet'](width=4, image=8))\n"


@pytest.fixture(scope="module")
def tiny_resnet():
    return to_relax(*MODELS["resnet"](width=4, image=8))


def test_sites_and_plan(tiny_resnet):
    space = LayoutSpace(tiny_resnet)
    kinds = [name.split(":")[1] for name in space.site_names()]
    assert kinds == ["conv2d"] * 6 + ["matmul"]
    all_nhwc = space.plan(np.ones(7, int))
    assert all_nhwc["to_nhwc"] == {-1} and not all_nhwc["to_nchw"]   # the input once; the mean reads NHWC
    first_only = space.plan(np.array([1, 0, 0, 0, 0, 0, 0]))
    assert first_only["to_nchw"]                                     # back to NCHW for the next conv
    site_feat, global_feat = space.config_features(np.array([[1, 0, 0, 0, 0, 0, 0], [0] * 7]))
    assert site_feat.shape == (2, 7, 3) and site_feat[0, 0, 0] == 1 and site_feat[0, 0, 1] == 1
    assert global_feat[1].tolist() == [0.0, 0.0]                     # as imported: no transposes
    graph = space.configured_graph(np.eye(7, dtype=np.int8))
    assert graph.config_feat.shape == (7, 7, 3) and graph.node_feat.shape[0] == len(space.bindings) + 1
    with pytest.raises(ValueError, match="7 choices"):
        space.plan([1, 0])


def test_rewrite_computes_the_same_function(tiny_resnet, target):
    space = LayoutSpace(tiny_resnet)
    inputs = random_inputs(tiny_resnet)
    reference, _, _ = run_and_time(compile_default(tiny_resnet, target), inputs)
    for config in (np.ones(7, int), np.array([1, 0, 1, 1, 0, 1, 1])):
        mod = space.apply(config)
        text = mod.script()
        assert 'data_layout="NHWC"' in text and ("dense" in text) == bool(config[-1])
        output, _, _ = run_and_time(compile_default(mod, target), inputs)
        np.testing.assert_allclose(output, reference, rtol=1e-4, atol=1e-5)


def test_model_without_layout_choices_is_refused():
    with pytest.raises(UnsupportedProgramError, match="no operator with a layout choice"):
        LayoutSpace(to_relax(torch.nn.ReLU(), torch.randn(4, 4)))


def test_collect_train_eval_search(tmp_path, capsys):
    source = tmp_path / "tiny.py"
    source.write_text(TINY)
    data, ckpt = tmp_path / "layouts", tmp_path / "layout.safetensors"
    target = ["--target", '{"kind": "llvm", "num-cores": 2}']
    assert main(["layout", "collect", "--model", f"{source}:tiny", "--configs", "12", "--out", str(data), *target]) == 0
    lines = (data / "measurements.jsonl").read_text().splitlines()
    assert len(lines) == 12 and len({json.loads(line)["config"] for line in lines}) == 12
    assert main(["layout", "collect", "--model", f"{source}:tiny", "--configs", "12", "--out", str(data), *target]) == 0
    assert len((data / "measurements.jsonl").read_text().splitlines()) == 12       # resumed: nothing new
    assert main(["layout", "train", str(data), "--out", str(ckpt), "--steps", "40", "--eval-every", "20"]) == 0
    card = json.loads(ckpt.with_suffix(".json").read_text())
    assert len(card["training_data"]["held_out_configs"]) == 2         # 20% of 12, held out
    assert main(["layout", "eval", str(data), "--checkpoint", str(ckpt), "--all"]) == 0
    assert "12 configurations: Kendall tau" in capsys.readouterr().out
    assert main(["layout", "search", "--model", f"{source}:tiny", "--checkpoint", str(ckpt), "--pool", "16",
                 "--top-k", "2", *target]) == 0
    assert "measured 2: fastest" in capsys.readouterr().out


def test_malformed_measurement_is_named(tmp_path, tiny_resnet):
    (tmp_path / "measurements.jsonl").write_text('{"config": "0101010", "latency_s": 0.01}\n{"config": "01"}\n')
    with pytest.raises(RecordError, match="measurements.jsonl:2"):
        read_measurements(tmp_path, 7)
