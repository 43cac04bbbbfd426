"""Measured layout configurations of a Relax model: collecting, training, evaluating.

A layout data folder holds ``space.json`` (the model and its configurable operators) and
``measurements.jsonl``: one line per measured configuration, appended as it is measured and
never rewritten (``{"config": "0110...", "latency_s": ..., "repeats_s": [...]}``).
Re-running a collection measures only configurations not there yet.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from search.layout import layout_search

from ..checkpoint import load_checkpoint, save_checkpoint
from ..convert.relax_layout import FEATURE_SCHEMA, FEATURE_SCHEMA_VERSION, LayoutSpace
from ..errors import RecordError
from ..model_zoo import relax_model
from ..nn import TGraphConfig
from ..pretrain import evaluate_graphs, pretrain, split_configurations
from ..workloads import load_module
from .end_to_end import compile_default, compile_tuned, random_inputs, run_and_time

MEASUREMENTS = "measurements.jsonl"
SPACE = "space.json"
#: Relax models whose layouts can be searched, by name: (family, sizes).
LAYOUT_MODELS = {
    "resnet3": ("resnet", {"width": 16, "image": 32, "stages": 3}),
    "resnet": ("resnet", {"width": 16, "image": 32}),
    "mobilenet_v2": ("mobilenet_v2", {"width": 16, "image": 32}),
}


def load_model(name: str):
    """The Relax IRModule of a :data:`LAYOUT_MODELS` entry (or a built-in/``file.py:NAME`` module)."""
    if name in LAYOUT_MODELS:
        family, sizes = LAYOUT_MODELS[name]
        return relax_model(family, **sizes)
    return load_module(name)


@dataclass
class Measured:
    """Measured configurations: ``configs (c, sites)`` int8, ``latency (c,)`` seconds."""

    configs: np.ndarray
    latency: np.ndarray


def read_measurements(folder: str | Path, num_sites: int) -> Measured:
    """All measured configurations of ``folder``; a malformed line is reported with its number."""
    path = Path(folder) / MEASUREMENTS
    configs, latency = [], []
    if path.is_file():
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if not line.strip():
                continue
            try:
                entry = json.loads(line)
                config = [int(ch) for ch in entry["config"]]
                value = float(entry["latency_s"])
            except (ValueError, KeyError, TypeError) as err:
                raise RecordError(f"{path}:{number}: malformed measurement ({err})") from err
            if len(config) != num_sites or set(config) - {0, 1} or not value > 0:
                raise RecordError(f"{path}:{number}: expected {num_sites} choices of 0/1 and a positive latency")
            configs.append(config)
            latency.append(value)
    return Measured(np.array(configs, np.int8).reshape(-1, num_sites), np.array(latency, np.float64))


def measure_config(space: LayoutSpace, config, target, inputs, db_dir: str | Path | None = None) -> tuple[float, list[float]]:
    """Build the model with ``config``'s layouts (TVM's default schedules, or a tuning
    database's where given) and time it with the Relax VM: (median, repeats) in seconds."""
    mod = space.apply(config)
    executable = compile_tuned(mod, target, db_dir) if db_dir else compile_default(mod, target)
    _, median, repeats = run_and_time(executable, inputs)
    return median, repeats


def collect_layouts(folder: str | Path, model: str, count: int, target, seed: int = 0,
                    db_dir: str | Path | None = None) -> Measured:
    """Measure ``count`` distinct random configurations of ``model`` into ``folder`` (resuming)."""
    from tqdm import tqdm

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    mod = load_model(model)
    space = LayoutSpace(mod)
    space_file = folder / SPACE
    info = {"model": model, "sites": space.site_names(), "target": str(target),
            "schedules": f"tuning database {db_dir}" if db_dir else "TVM default (untuned)"}
    if space_file.is_file():
        known = json.loads(space_file.read_text())
        if known["model"] != model or known["sites"] != info["sites"]:
            raise ValueError(f"{folder} holds measurements of {known['model']} ({len(known['sites'])} sites), "
                             f"not {model} ({space.num_sites}): use another folder")
    else:
        space_file.write_text(json.dumps(info, indent=1))
    done = read_measurements(folder, space.num_sites)
    todo = space.random_configs(count - len(done.configs), np.random.default_rng(seed + len(done.configs)),
                                exclude=done.configs)
    inputs = random_inputs(mod)
    with open(folder / MEASUREMENTS, "a") as log:
        for config in tqdm(todo, desc=f"layouts of {model}", unit="config"):
            median, repeats = measure_config(space, config, target, inputs, db_dir)
            log.write(json.dumps({"config": "".join(map(str, config)), "latency_s": median, "repeats_s": repeats,
                                  "time": time.strftime("%Y-%m-%d %H:%M:%S")}) + "\n")
            log.flush()
    return read_measurements(folder, space.num_sites)


def load_layout_data(folder: str | Path) -> tuple[LayoutSpace, Measured, dict]:
    """(space, measurements, space.json) of a layout data folder."""
    space_file = Path(folder) / SPACE
    if not space_file.is_file():
        raise FileNotFoundError(f"{space_file} does not exist: collect with `tgraph layout collect` first")
    info = json.loads(space_file.read_text())
    space = LayoutSpace(load_model(info["model"]))
    if space.site_names() != info["sites"]:
        raise ValueError(f"{folder}: the model {info['model']} no longer has the measured operators")
    return space, read_measurements(folder, space.num_sites), info


def train_layout_model(folder: str | Path, out: str | Path, config, test_fraction: float = 0.2,
                       command: str = "") -> dict:
    """Train on the measured configurations outside a held-out ``test_fraction`` (a tenth of
    the rest, at least two, decides early stopping); the card records the held-out
    configurations."""
    space, measured, info = load_layout_data(folder)
    if len(measured.latency) < 10:
        raise ValueError(f"{folder} has {len(measured.latency)} measured configurations; train needs at least 10")
    train, test = split_configurations(len(measured.latency), test_fraction, config.seed)
    fit, val = (train[idx] for idx in split_configurations(len(train), max(0.1, 2 / len(train)), config.seed + 1))
    graph = space.configured_graph(measured.configs, measured.latency, name=info["model"])
    model, history = pretrain({"fit": graph.select(fit)}, {"val": graph.select(val)},
                              TGraphConfig.from_schema(FEATURE_SCHEMA, **config.network), config)
    held_out = evaluate_graphs(model, {"test": graph.select(test)})["mean"]
    return save_checkpoint(
        out, model, FEATURE_SCHEMA_VERSION, seed=config.seed, history=history, command=command,
        training_data={"folder": str(folder), "model": info["model"], "train_configs": len(train),
                       "held_out_configs": ["".join(map(str, c)) for c in measured.configs[test]]},
        held_out=held_out, training=config.to_dict(),
    )


def evaluate_layout_model(folder: str | Path, checkpoint: str | Path, everything: bool = False) -> dict:
    """Ranking metrics on the checkpoint's held-out configurations (or on all measured)."""
    space, measured, info = load_layout_data(folder)
    model, card = load_checkpoint(checkpoint, FEATURE_SCHEMA_VERSION)
    keys = ["".join(map(str, c)) for c in measured.configs]
    wanted = set(keys) if everything else set(card["training_data"]["held_out_configs"])
    index = np.array([i for i, k in enumerate(keys) if k in wanted])
    if len(index) < 2:
        raise ValueError(f"{folder} holds fewer than 2 of the configurations to evaluate")
    graph = space.configured_graph(measured.configs[index], measured.latency[index], name=info["model"])
    report = evaluate_graphs(model, {info["model"]: graph})
    report["configs"] = int(len(index))
    return report


def search_layouts(model: str, checkpoint: str | Path, target, pool_size: int = 1024, top_k: int = 8,
                   seed: int = 0, db_dir: str | Path | None = None):
    """Score ``pool_size`` layout configurations of ``model`` with a checkpoint of ``tgraph
    layout train`` and measure the ``top_k`` end to end (:func:`search.layout_search`)."""
    mod = load_model(model)
    network, _ = load_checkpoint(checkpoint, FEATURE_SCHEMA_VERSION)
    space, inputs = LayoutSpace(mod), random_inputs(mod)
    return layout_search(space, network, lambda config: measure_config(space, config, target, inputs, db_dir)[0],
                         pool_size, top_k, seed)
