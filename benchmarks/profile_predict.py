"""Where TGraph's ``predict`` spends its time during a whole-model tuning run.

Tunes ``model_resnet`` with ``tgraph-xgb`` and the ``pruning-light`` search for
``--trials-per-task`` trials per task under ``cProfile`` and splits the cost model's
``predict`` time into TVM's ``PerStoreFeature`` extraction (C++, shared with the XGBoost
fallback), parsing traces, the network's forward pass and XGBoost's own prediction.
Profiling slows the Python parts, so the split is a guide, not a timing to compare with
the tuning comparisons. Run it alone on the machine; the host CPU is recorded.

    python benchmarks/profile_predict.py [--trials-per-task 32] [--json benchmarks/results/profile_predict.json]
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

#: Part of ``predict`` -> (file suffix, function name) whose cumulative time it is.
PARTS = {
    "predict": ("cost_models/tgraph_cost_model.py", "predict"),
    "per_store_feature_extraction": ("meta_schedule/feature_extractor/feature_extractor.py", "extract_from"),
    "trace_parsing": ("tvm_tgraph/convert/tir/trace.py", "parse_trace"),
    "network_forward": ("tvm_tgraph/nn/model.py", "predict_scores"),
    "xgboost_predict": ("meta_schedule/cost_model/xgb_model.py", "predict"),
}


def cumulative_seconds(stats: pstats.Stats) -> dict[str, float]:
    """Cumulative seconds of each of :data:`PARTS` (0 where it was never called)."""
    found = dict.fromkeys(PARTS, 0.0)
    for (file, _, function), (_, _, _, cumulative, _) in stats.stats.items():
        for part, (suffix, name) in PARTS.items():
            if function == name and file.endswith(suffix):
                found[part] += cumulative
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trials-per-task", type=int, default=32)
    parser.add_argument("--json", default=str(Path(__file__).parent / "results" / "profile_predict.json"))
    args = parser.parse_args()

    from tvm_tgraph.files import atomic_write_bytes
    from tvm_tgraph.model_zoo import extract_tir_tasks
    from tvm_tgraph.tvm_env import host_cpu_names, make_target
    from tvm_tgraph.workflows.tuning import tune
    from tvm_tgraph.workloads import load_module

    mod = load_module("model_resnet")
    tasks = len(extract_tir_tasks(mod, make_target()))
    profile = cProfile.Profile()
    with tempfile.TemporaryDirectory() as work_dir:
        profile.enable()
        summary = tune(mod, "tgraph-xgb", args.trials_per_task * tasks, work_dir, strategy="pruning-light",
                       progress=False)
        profile.disable()
    parts = cumulative_seconds(pstats.Stats(profile))
    report = {"command": "python benchmarks/profile_predict.py " + " ".join(sys.argv[1:]), "cpu": host_cpu_names(),
              "model": "model_resnet", "tasks": tasks, "trials": summary.trials, "wall_s": summary.wall_s,
              "cost_model_split": summary.cost_model_split, "profiled_s": parts}
    atomic_write_bytes(Path(args.json), json.dumps(report, indent=1).encode())
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
