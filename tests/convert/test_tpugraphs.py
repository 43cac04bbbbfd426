"""TpuGraphs files: the dataset's exact schema (generated), the real stripped file, bad files."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tvm_tgraph.cli import main
from tvm_tgraph.convert.tpugraphs import (
    TpuGraphsFormatError, deduplicate_configs, load_layout, load_tile, load_tpugraphs, prune_to_configurable,
)

REAL_FILE = Path(__file__).resolve().parents[3] / "shared" / "data" / "tpugraphs" / "cleaned_alexnet.npz"
needs_real_file = pytest.mark.skipif(not REAL_FILE.is_file(), reason=f"{REAL_FILE} (the shared data folder) is absent")


def layout_arrays(seed=0, n=12, configs=40, duplicate=True):
    """A chain of ``n`` nodes (node i consumes i-1) in the released layout schema; nodes
    3 and 7 are configurable; runtime grows with one config column (learnable)."""
    rng = np.random.default_rng(seed)
    feat = rng.integers(-1, 4, size=(configs, 2, 18)).astype(np.float32)
    if duplicate:
        feat[1] = feat[0]
    runtime = (1e6 * (10 + 3 * feat[:, 0, 2] + feat[:, 1, 5]) + rng.integers(0, 1000, configs)).astype(np.int64)
    return dict(
        node_feat=rng.normal(size=(n, 140)).astype(np.float32), node_opcode=rng.integers(0, 120, n).astype(np.uint8),
        edge_index=np.array([[i, i - 1] for i in range(1, n)], dtype=np.int64),
        node_config_ids=np.array([3, 7], dtype=np.int64), node_config_feat=feat, config_runtime=runtime,
        node_splits=np.array([[0, 6, n]], dtype=np.int64),
    )


def tile_arrays(seed=0, n=6, configs=30):
    rng = np.random.default_rng(seed)
    feat = rng.integers(1, 9, size=(configs, 24)).astype(np.float32)
    return dict(
        node_feat=rng.normal(size=(n, 140)).astype(np.float32), node_opcode=rng.integers(0, 120, n).astype(np.uint8),
        edge_index=np.array([[i, i - 1] for i in range(1, n)], dtype=np.int64), config_feat=feat,
        config_runtime=(1000 * feat[:, 0]).astype(np.int64), config_runtime_normalizers=np.full(configs, 10, np.int64),
    )


def write(path, arrays):
    np.savez(path, **arrays)
    return path


def test_layout_file_in_the_released_schema(tmp_path):
    arrays = layout_arrays()
    graph = load_layout(write(tmp_path / "g.npz", arrays))
    assert graph.node_feat.shape == (12, 140) and graph.config_feat.shape == (40, 2, 18)
    assert graph.edge_index[:, 0].tolist() == [0, 1]          # producer -> consumer
    pruned = prune_to_configurable(graph)                     # nodes 2,3,4 and 6,7,8
    assert len(pruned.node_kind) == 6 and pruned.node_kind.tolist() == arrays["node_opcode"][[2, 3, 4, 6, 7, 8]].tolist()
    assert pruned.config_node_ids.tolist() == [1, 4] and pruned.edge_index.shape == (2, 4)
    unique = deduplicate_configs(pruned)
    assert unique.num_configs == 39                           # configs 0 and 1 are one
    assert unique.runtime[0] == pytest.approx(arrays["config_runtime"][:2].mean())


def test_tile_file_configs_become_global_features(tmp_path):
    graph = load_tpugraphs(write(tmp_path / "t.npz", tile_arrays()))
    assert graph.global_feat.shape[1] == 24 and len(graph.config_node_ids) == 0
    assert graph.runtime.min() == pytest.approx(100.0)        # runtime / normaliser
    assert len(load_tile(tmp_path / "t.npz").node_kind) == 6  # not pruned away


@needs_real_file
def test_real_file_with_stripped_columns():
    graph = load_tpugraphs(REAL_FILE)
    assert graph.node_feat.shape[1] == 70 and graph.config_feat.shape[1:] == (26, 10)
    assert graph.num_configs == 29905                         # distinct configurations (README)
    assert len(graph.node_kind) < 372 and np.isfinite(graph.node_feat).all()
    assert graph.runtime.min() == pytest.approx(79.5e6, rel=0.01)


@pytest.mark.parametrize("corrupt, message", [
    (lambda a: a.pop("node_config_feat"), "missing arrays"),
    (lambda a: a.update(edge_index=a["edge_index"] + 100), "node that does not exist"),
    (lambda a: a.update(node_config_feat=a["node_config_feat"][:, :1]), "node_config_feat"),
    (lambda a: a.update(config_runtime=a["config_runtime"][:5]), "config_runtime"),
    (lambda a: a.update(node_config_feat=a["node_config_feat"][:0], config_runtime=a["config_runtime"][:0]),
     "array node_config_feat holds 0 configurations"),
    (lambda a: a.update(node_config_feat=a["node_config_feat"][:1], config_runtime=a["config_runtime"][:1]),
     "array node_config_feat holds 1 configuration:"),
    (lambda a: a["node_feat"].__setitem__((0, 0), np.nan), "array node_feat has NaN"),
    (lambda a: a["node_config_feat"].__setitem__((1, 0, 0), np.inf), "array node_config_feat has NaN or infinite"),
])
def test_malformed_files_are_named(tmp_path, corrupt, message):
    arrays = layout_arrays()
    corrupt(arrays)
    with pytest.raises(TpuGraphsFormatError, match=message):
        load_tpugraphs(write(tmp_path / "bad.npz", arrays))


def test_unreadable_and_missing_files(tmp_path):
    good = write(tmp_path / "g.npz", layout_arrays())
    (tmp_path / "cut.npz").write_bytes(good.read_bytes()[:300])
    with pytest.raises(TpuGraphsFormatError, match="cut.npz"):
        load_tpugraphs(tmp_path / "cut.npz")
    np.savez(tmp_path / "pickled.npz", node_feat=np.array([{"a": 1}], dtype=object))
    with pytest.raises(TpuGraphsFormatError, match="pickled.npz"):
        load_tpugraphs(tmp_path / "pickled.npz")
    with pytest.raises(FileNotFoundError, match="nothere.npz"):
        load_tpugraphs(tmp_path / "nothere.npz")


def test_train_and_eval_a_collection(tmp_path, capsys):
    for split, seeds in (("train", range(6)), ("valid", range(10, 12))):
        (tmp_path / split).mkdir()
        for seed in seeds:
            write(tmp_path / split / f"g{seed}.npz", layout_arrays(seed, configs=60))
    ckpt = tmp_path / "m.safetensors"
    assert main(["tpugraphs", "train", str(tmp_path), "--out", str(ckpt), "--steps", "200", "--eval-every", "50"]) == 0
    assert main(["tpugraphs", "eval", str(tmp_path), "--checkpoint", str(ckpt), "--json", str(tmp_path / "r.json")]) == 0
    report = json.loads((tmp_path / "r.json").read_text())
    assert set(report["per_graph"]) == {"g10", "g11"}
    assert report["mean"]["kendall_tau"] > 0.5                # the runtime is learnable from the configs
    capsys.readouterr()
    (tmp_path / "tile").mkdir()
    write(tmp_path / "tile" / "t.npz", tile_arrays())
    assert main(["tpugraphs", "eval", str(tmp_path), "--split", "tile", "--checkpoint", str(ckpt)]) == 2
    assert "tpugraphs" in capsys.readouterr().err              # another schema: refused with a message


@needs_real_file
def test_split_eval_on_the_real_file(tmp_path, capsys):
    out = tmp_path / "alexnet.json"
    assert main(["tpugraphs", "split-eval", str(REAL_FILE), "--steps", "40", "--eval-every", "20",
                 "--json", str(out)]) == 0
    report = json.loads(out.read_text())
    assert report["test_configs"] == 5981 and report["train_configs"] == 23924
    # the ridge baseline is deterministic (0.845 on this split); 40 steps of TGraph already rank
    # the held-out configurations far better than chance
    assert report["linear"]["kendall_tau"] > 0.8 and report["tgraph"]["kendall_tau"] > 0.3, report
    assert "Kendall tau TGraph" in capsys.readouterr().out
