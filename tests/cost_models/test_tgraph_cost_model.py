"""TGraphCostModel inside real MetaSchedule tuning runs (real builds, real measurements)."""

from __future__ import annotations

import logging

import numpy as np
import pytest
import torch
import tvm
from conftest import ALLOC_BUFFER_KERNEL, drop_capture_handlers, sample_candidates
from tvm import relax
from tvm.relax.frontend.torch import from_exported_program
from tvm.s_tir import meta_schedule as ms

import cost_models.tgraph_cost_model as tgraph_cost_model_module
from cost_models import TGraphCostModel
from tvm_tgraph.checkpoint import save_checkpoint
from tvm_tgraph.cli import main
from tvm_tgraph.convert.tir import FEATURE_SCHEMA
from tvm_tgraph.errors import CheckpointError
from tvm_tgraph.measure import FastBuilder, make_runner
from tvm_tgraph.metrics import standardise
from tvm_tgraph.nn import TGraphConfig, TGraphEnsemble, TGraphNet
from tvm_tgraph.testing import measure_candidates
from tvm_tgraph.workloads import as_ir_module, matmul

# Tests measure with a light evaluator: what is checked is behaviour, not speed.
LIGHT = dict(number=1, repeat=2, min_repeat_ms=0)


def _tune(mod, target, work_dir, cost_model, trials=16):
    drop_capture_handlers()
    return ms.tune_tir(mod, target, str(work_dir), max_trials_global=trials, num_trials_per_iter=8,
                       builder=FastBuilder(max_workers=2), runner=make_runner(**LIGHT),
                       cost_model=cost_model, seed=0)


def _best_schedule_runs_correctly(mod, target, database):
    sch = ms.tir_integration.compile_tir(database, mod, target)
    assert sch is not None, "tuning recorded no valid schedule"
    lib = tvm.compile(sch.mod, target=target)
    dev = tvm.cpu()
    a, b = np.random.rand(64, 64).astype("float32"), np.random.rand(64, 64).astype("float32")
    out = tvm.runtime.tensor(np.zeros((64, 64), "float32"), dev)
    lib(tvm.runtime.tensor(a, dev), tvm.runtime.tensor(b, dev), out)
    np.testing.assert_allclose(out.numpy(), a @ b, rtol=1e-4, atol=1e-4)


def test_sixteen_trial_tune_with_the_network_serving(tmp_path, target):
    mod = as_ir_module(matmul(64, 64, 64))
    model = TGraphCostModel(use_pretrained=False, min_online_samples=8, update_time_budget_s=1.0)
    database = _tune(mod, target, tmp_path, model, trials=16)
    assert model.scored["network"] > 0, "after 8 measurements the network must rank candidates"
    assert model.scored["fallback"] > 0, "before that, XGBoost ranks them"
    _best_schedule_runs_correctly(mod, target, database)


def _pretrained_checkpoint(path):
    torch.manual_seed(1)
    save_checkpoint(path, TGraphNet(TGraphConfig.from_schema(FEATURE_SCHEMA)), FEATURE_SCHEMA.version, pretrained=True)
    return path


class _Collect(logging.Handler):
    def __init__(self):
        super().__init__(logging.WARNING)
        self.messages = []

    def emit(self, record):
        self.messages.append(record.getMessage())


def test_a_named_checkpoint_that_fails_to_load_is_an_error(tmp_path):
    path = _pretrained_checkpoint(tmp_path / "ckpt.safetensors")
    path.write_bytes(path.read_bytes()[:-64])   # truncated, as by an interrupted copy
    with pytest.raises(CheckpointError, match="do not match their model card"):
        TGraphCostModel(checkpoint=path)
    with pytest.raises(CheckpointError, match="does not exist"):
        TGraphCostModel(checkpoint=tmp_path / "typo.safetensors")


def test_unusable_shipped_checkpoint_is_reported_and_tuning_falls_back(tmp_path, target, monkeypatch):
    path = _pretrained_checkpoint(tmp_path / "shipped.safetensors")
    path.write_bytes(path.read_bytes()[:-64])
    monkeypatch.setattr(tgraph_cost_model_module, "DEFAULT_CHECKPOINT", path)   # as if the installed copy were damaged
    collect = _Collect()
    logging.getLogger("tvm_tgraph.cost_model").addHandler(collect)
    try:
        model = TGraphCostModel(min_online_samples=10_000)
        mod = as_ir_module(matmul(64, 64, 64))
        database = _tune(mod, target, tmp_path / "work", model, trials=16)
    finally:
        logging.getLogger("tvm_tgraph.cost_model").removeHandler(collect)
    assert "do not match their model card" in model.checkpoint_error
    assert any("shipped checkpoint cannot be used" in m for m in collect.messages), "reported at load"
    assert model.scored["network"] == 0 and model.scored["fallback"] > 0
    fallbacks = [m for m in collect.messages if "XGBoost ranks task" in m]
    assert len(fallbacks) == 1 and "do not match their model card" in fallbacks[0], "logged once, with its reason"
    _best_schedule_runs_correctly(mod, target, database)
    # load() is dispatched through TVM's FFI, which re-raises Python errors as RuntimeError
    with pytest.raises((CheckpointError, RuntimeError), match="not a saved TGraphCostModel"):
        TGraphCostModel(use_pretrained=False).load(str(tmp_path / "no_such_dir"))


def test_tgraph_tunes_a_kernel_with_a_function_level_alloc_buffer_to_the_end(tmp_path, capsys):
    source = tmp_path / "kernel.py"
    source.write_text(ALLOC_BUFFER_KERNEL)
    drop_capture_handlers()
    code = main(["tune", f"{source}:scaled_matmul", "--cost-model", "tgraph", "--trials", "16",
                 "--trials-per-iter", "8", "--work-dir", str(tmp_path / "run"),
                 "--target", '{"kind": "llvm", "num-cores": 2}'])
    out = capsys.readouterr().out
    assert code == 0 and "of 16" in out, out
    ranked = next(line for line in out.splitlines() if line.startswith("ranked by"))
    assert "XGBoost fallback: 0 candidates" in ranked, "the converter represents the kernel: TGraph ranks it"


def test_a_failure_inside_update_hands_the_task_to_xgboost(measured):
    """A task whose candidates the network cannot learn from goes to XGBoost, in update as
    in predict, logged once; tuning goes on."""
    context, candidates, results = measured
    model = TGraphCostModel(use_pretrained=False, min_online_samples=4)
    # A network sized for another feature schema fails on this task's graphs for real.
    import torch

    from tvm_tgraph.nn import TGraphConfig, TGraphEnsemble, TGraphNet

    torch.manual_seed(0)
    model.network = TGraphNet(TGraphConfig(3, 3, 3, 3, hidden=8, num_blocks=1, heads=2))
    model.update(context, candidates, results)
    assert list(model.failed_tasks.values())[0][0] == "error"
    scores = model.predict(context, candidates)
    assert scores.shape == (len(candidates),) and model.scored == {"network": 0, "fallback": len(candidates)}
    model.update(context, candidates, results)   # and again: no exception, still the fallback


@pytest.fixture(scope="module")
def measured():
    context, candidates = sample_candidates("matmul_128", count=24)
    return context, candidates, measure_candidates(context, candidates, **LIGHT)


@pytest.mark.parametrize("pretrained", [False, True])
def test_save_load_round_trip_and_repeated_updates(tmp_path, measured, pretrained):
    context, candidates, results = measured
    checkpoint = _pretrained_checkpoint(tmp_path / "p.safetensors") if pretrained else None
    model = TGraphCostModel(checkpoint=checkpoint, use_pretrained=pretrained, min_online_samples=8,
                            update_max_steps=5)
    if pretrained:
        zero_shot = model.predict(context, candidates)
        assert model.scored == {"network": 24, "fallback": 0}, "a pretrained network serves at once"
    model.update(context, candidates[:12], results[:12])
    model.update(context, candidates[12:], results[12:])
    model.update(context, candidates[12:], results[12:])     # duplicates are not stored twice
    assert model.store.num_samples(model.store.keys()[0]) == sum(r.error_msg is None for r in results)

    scores = model.predict(context, candidates)
    assert scores.dtype == np.float64 and scores.shape == (24,)
    assert np.all((scores > 0) & (scores < 1))
    np.testing.assert_array_equal(scores, model.predict(context, candidates))   # deterministic
    if pretrained:
        assert not np.array_equal(scores, zero_shot), "online training must move the ranking"

    model.save(str(tmp_path / "saved"))
    restored = TGraphCostModel(use_pretrained=False, min_online_samples=8)
    restored.load(str(tmp_path / "saved"))
    np.testing.assert_array_equal(restored.predict(context, candidates), scores)
    assert restored.store.num_samples(restored.store.keys()[0]) == model.store.num_samples(model.store.keys()[0])
    assert restored.fallback.data_size == model.fallback.data_size


def test_frozen_tgraph_ranks_with_the_pretrained_network_alone(tmp_path, measured):
    """``tgraph-frozen`` never fine-tunes: its scores stay the pretrained network's after
    updates, which still teach the XGBoost fallback."""
    from cost_models import create

    context, candidates, results = measured
    model = create("tgraph-frozen", checkpoint=_pretrained_checkpoint(tmp_path / "p.safetensors"))
    zero_shot = model.predict(context, candidates)
    model.update(context, candidates, results)
    np.testing.assert_array_equal(model.predict(context, candidates), zero_shot)
    assert len(model.store) == 0 and model.fallback.data_size == sum(r.error_msg is None for r in results)
    assert model.scored == {"network": 48, "fallback": 0}


def test_tgraph_xgb_blends_the_prior_with_its_learning_fallback(tmp_path, measured):
    """``tgraph-xgb`` never fine-tunes: it ranks as the pretrained network until its XGBoost
    fallback has trained, then by the standardised blend of the two (weight n / (n + 64) on
    XGBoost, n the task's measurements), and a saved model ranks the same when loaded."""
    from cost_models import create
    from cost_models.tgraph_cost_model import blend_with_prior
    from tvm_tgraph.nn import predict_scores

    context, candidates, results = measured
    checkpoint = _pretrained_checkpoint(tmp_path / "p.safetensors")
    model = create("tgraph-xgb", checkpoint=checkpoint)
    assert model.fallback.extractor.rows is model.converter.store_rows   # each candidate extracted once
    zero_shot = model.predict(context, candidates)
    model.update(context, candidates[:8], results[:8])   # fewer than the fallback's 16 warm-up samples
    np.testing.assert_array_equal(model.predict(context, candidates), zero_shot)
    assert model.last_optimistic_scores is None           # one opinion so far: no uncertainty
    model.update(context, candidates[8:], results[8:])
    blended = model.predict(context, candidates)

    measured_count = sum(r.error_msg is None for r in results)
    assert list(model.measured_by_task.values()) == [measured_count] and len(model.store) == 0
    prior = predict_scores(model.network, model.converter.convert(context, candidates), model.chunk_size)
    expected = blend_with_prior(prior, model.fallback.predict(context, candidates), measured_count, 64)
    np.testing.assert_allclose(blended, tgraph_cost_model_module.squash(expected), rtol=1e-6)
    assert not np.allclose(blended, zero_shot)
    gap = np.abs(standardise(prior) - standardise(model.fallback.predict(context, candidates)))
    np.testing.assert_allclose(model.last_optimistic_scores - expected, gap / 2, rtol=1e-6, atol=1e-9)
    assert gap.max() > 0                                   # the two rankers disagree somewhere

    model.save(str(tmp_path / "saved"))
    restored = create("tgraph-xgb", checkpoint=checkpoint)
    restored.load(str(tmp_path / "saved"))
    np.testing.assert_allclose(restored.predict(context, candidates), blended, rtol=1e-6)


def test_a_seed_ensemble_ranks_by_its_mean_and_its_spread_is_the_uncertainty(tmp_path, measured):
    """With an ensemble checkpoint, ``tgraph-xgb`` ranks by the members' mean standardised
    score and has upper-confidence scores from the first round (the members' spread), then
    blends XGBoost in as one more opinion; ``tgraph`` fine-tunes the first member."""
    from cost_models import create
    from tvm_tgraph.nn import predict_member_scores

    context, candidates, results = measured
    networks = []
    for seed in (1, 2, 3):
        torch.manual_seed(seed)
        networks.append(TGraphNet(TGraphConfig.from_schema(FEATURE_SCHEMA)))
    checkpoint = tmp_path / "ensemble.safetensors"
    save_checkpoint(checkpoint, TGraphEnsemble(networks[0].config, networks=networks), FEATURE_SCHEMA.version,
                    pretrained=True)
    model = create("tgraph-xgb", checkpoint=checkpoint)
    members = predict_member_scores(model.network, model.converter.convert(context, candidates), model.chunk_size)
    assert members.shape == (3, len(candidates))
    np.testing.assert_allclose(model.predict(context, candidates),
                               tgraph_cost_model_module.squash(members.mean(0)), rtol=1e-6)
    spread = np.stack([standardise(m) for m in members]).std(axis=0)
    np.testing.assert_allclose(model.last_optimistic_scores, members.mean(0) + spread, rtol=1e-6, atol=1e-9)

    model.update(context, candidates, results)
    model.predict(context, candidates)
    learned = model.fallback.predict(context, candidates)
    measured_count = sum(r.error_msg is None for r in results)
    blended = tgraph_cost_model_module.blend_with_prior(members.mean(0), learned, measured_count, 64)
    opinions = np.stack([standardise(o) for o in (*members, learned)])
    np.testing.assert_allclose(model.last_optimistic_scores, blended + opinions.std(axis=0), rtol=1e-6, atol=1e-9)

    fine_tuned = create("tgraph", checkpoint=checkpoint)
    assert isinstance(fine_tuned.pretrained_network, TGraphEnsemble) and isinstance(fine_tuned.network, TGraphNet)
    for x, y in zip(fine_tuned.network.state_dict().values(), networks[0].state_dict().values()):
        assert torch.equal(x, y)


def test_tgraph_ft_xgb_adds_its_fallback_to_the_fine_tuned_network_once_warm(tmp_path, measured):
    """``tgraph-ft-xgb`` fine-tunes the network as ``tgraph`` does, and blends the prior with the
    fine-tuned network alone until its XGBoost fallback has its 16 warm-up samples, then with
    the mean of the two standardised (weight n / (n + 16) on it); its upper-confidence scores
    spread over all three."""
    from cost_models import create
    from tvm_tgraph.nn import predict_scores

    context, candidates, results = measured
    checkpoint = _pretrained_checkpoint(tmp_path / "p.safetensors")
    model, alone = (create(name, checkpoint=checkpoint, update_time_budget_s=None) for name in ("tgraph-ft-xgb", "tgraph"))
    for first in (model, alone):
        first.update(context, candidates[:8], results[:8])   # fewer than the fallback's warm-up samples
    np.testing.assert_array_equal(model.predict(context, candidates), alone.predict(context, candidates))
    model.update(context, candidates[8:], results[8:])
    blended = model.predict(context, candidates)

    graph = model.converter.convert(context, candidates)
    prior = predict_scores(model.pretrained_network, graph, model.chunk_size)
    fine_tuned = predict_scores(model.network, graph, model.chunk_size)
    xgb = model.fallback.predict(context, candidates)
    measured_count = model.store.num_samples(model.store.keys()[0])
    both = (standardise(fine_tuned) + standardise(xgb)) / 2
    expected = tgraph_cost_model_module.blend_with_prior(prior, both, measured_count, 16)   # the learner's default b
    np.testing.assert_allclose(blended, tgraph_cost_model_module.squash(expected), rtol=1e-6)
    opinions = np.stack([standardise(o) for o in (prior, fine_tuned, xgb)])
    np.testing.assert_allclose(model.last_optimistic_scores, expected + opinions.std(axis=0), rtol=1e-6, atol=1e-9)


def test_tgraph_xgb_without_a_pretrained_network_leaves_tasks_to_xgboost(measured):
    context, candidates, results = measured
    model = TGraphCostModel(use_pretrained=False, learner="xgb", min_online_samples=8)
    model.update(context, candidates, results)
    model.predict(context, candidates)
    assert model.scored == {"network": 0, "fallback": 24} and model.network is None
    with pytest.raises(ValueError, match="learner must be one of 'network', 'xgb', 'network\\+xgb', not 'mlp'"):
        TGraphCostModel(learner="mlp")


def test_tune_relax_with_tgraph(tmp_path, target):
    torch.manual_seed(0)
    layer = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU()).eval()
    example = torch.randn(32, 64)
    with torch.no_grad():
        mod = from_exported_program(torch.export.export(layer, (example,)))
        expected = layer(example).numpy()
    with target:
        mod = relax.get_pipeline("zero")(mod)
    model = TGraphCostModel(min_online_samples=8, update_time_budget_s=0.5)   # shipped checkpoint, if any
    drop_capture_handlers()
    database = ms.relax_integration.tune_relax(
        mod=mod, params={}, target=target, work_dir=str(tmp_path), max_trials_global=16,
        num_trials_per_iter=8, builder=FastBuilder(max_workers=2), runner=make_runner(**LIGHT),
        cost_model=model, seed=0,
    )
    # the shipped checkpoint is pretrained: the network ranks every task from the first round
    assert len(database) > 0 and model.scored["network"] > 0 and model.scored["fallback"] == 0, model.scored
    executable = ms.relax_integration.compile_relax(database, mod, target, params=None)
    vm = relax.VirtualMachine(executable, tvm.cpu())
    (got,) = vm["main"](tvm.runtime.tensor(example.numpy()))   # the exported program returns a tuple
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-4, atol=1e-4)


def test_every_cost_model_name_makes_its_model():
    from cost_models import create
    from tvm_tgraph.names import COST_MODELS

    made = {name: create(name) for name in COST_MODELS}
    assert [type(model).__name__ for model in made.values()] == [
        "TGraphCostModel", "TGraphCostModel", "TGraphCostModel", "TGraphCostModel", "XGBModel", "XGBModel",
        "RandomModel"]
    assert (made["tgraph"].online, made["tgraph-frozen"].online) == (True, False)
    assert [made[name].learner for name in ("tgraph", "tgraph-xgb", "tgraph-ft-xgb")] == ["network", "xgb", "network+xgb"]
    assert (made["xgb"].num_warmup_samples, made["xgb-warm16"].num_warmup_samples) == (100, 16)
    with pytest.raises(ValueError, match="unknown cost model 'xgboost'"):
        create("xgboost")


def test_unsquash_returns_the_standardised_raw_scores_that_squash_mapped_into_0_1():
    raw = np.random.default_rng(0).normal(3.0, 5.0, 64)
    squashed = tgraph_cost_model_module.squash(raw)
    assert np.all((squashed > 0) & (squashed < 1))
    np.testing.assert_allclose(tgraph_cost_model_module.unsquash(squashed), standardise(raw), rtol=1e-9, atol=1e-9)
