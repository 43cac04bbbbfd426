"""Per-candidate cost of scoring: TGraph (convert + network) against XGBoost (extract + predict).

Both cost models are first updated with the same real measurements of 64 candidates, then
score the same 2,048 candidates of a 256^3 matmul through their MetaSchedule ``predict``,
alternately, ``--repeats`` times each; TGraph's feature cache is emptied before each of its
runs so that every candidate is converted. Target: TGraph within 3x of XGBoost.

    python benchmarks/predict_speed.py [--candidates 2048] [--repeats 3] [--checkpoint PATH] [--json PATH]

``--checkpoint`` scores with another network than the shipped one (a candidate recipe's, say,
to see what a wider network costs per candidate before shipping it).
"""

from __future__ import annotations

import argparse
import json
import shlex
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tvm_tgraph.files import atomic_write_bytes  # noqa: E402
from tvm_tgraph.tvm_env import host_cpu_names, make_target, register_light_tensor_intrin  # noqa: E402

register_light_tensor_intrin()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--candidates", type=int, default=2048)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--checkpoint", help="TGraph checkpoint to score with (default: the shipped one)")
    parser.add_argument("--json", default=str(Path(__file__).parent / "results" / "predict_speed.json"))
    args = parser.parse_args()
    if args.checkpoint and not Path(args.checkpoint).is_file():
        parser.error(f"--checkpoint {args.checkpoint}: no such file")

    from tvm.s_tir.meta_schedule.cost_model import XGBModel

    from cost_models import TGraphCostModel
    from tvm_tgraph.convert.tir import TirConverter
    from tvm_tgraph.testing import measure_candidates, random_candidates
    from tvm_tgraph.workloads import as_ir_module, matmul

    target = make_target()
    context, candidates = random_candidates(as_ir_module(matmul(256, 256, 256)), target, args.candidates + 64,
                                            task_name="matmul_256")
    train, scored = candidates[:64], candidates[64:]
    results = measure_candidates(context, train)
    xgb = XGBModel(num_warmup_samples=0)
    tgraph = TGraphCostModel(checkpoint=args.checkpoint, min_online_samples=0, update_max_steps=20)
    for model in (xgb, tgraph):
        model.update(context, train, results)

    times = {"tgraph": [], "xgb": []}
    for _ in range(args.repeats):
        start = time.perf_counter()
        xgb.predict(context, scored)
        times["xgb"].append(time.perf_counter() - start)
        tgraph.converter = TirConverter()        # empty cache: every candidate is converted
        start = time.perf_counter()
        tgraph.predict(context, scored)
        times["tgraph"].append(time.perf_counter() - start)
    assert tgraph.scored["network"] == args.repeats * len(scored), "the network must have scored"
    start = time.perf_counter()
    tgraph.predict(context, scored)
    cached = time.perf_counter() - start

    per = {k: statistics.median(v) / len(scored) * 1e3 for k, v in times.items()}
    report = {
        "workload": "matmul 256x256x256 float32", "candidates": len(scored), "repeats": args.repeats,
        "target": str(target), "cpu": host_cpu_names(), "checkpoint": args.checkpoint or "shipped",
        "tgraph_ms_per_candidate": per["tgraph"], "xgb_ms_per_candidate": per["xgb"],
        "ratio_tgraph_over_xgb": per["tgraph"] / per["xgb"],
        "tgraph_cached_ms_per_candidate": cached / len(scored) * 1e3,
        "raw_seconds": times, "command": shlex.join(["python", "benchmarks/predict_speed.py", *sys.argv[1:]]),
    }
    print(f"{len(scored)} candidates of a 256^3 matmul, median of {args.repeats} runs each")
    print(f"  XGBoost  (PerStoreFeature + booster) : {per['xgb']:.3f} ms / candidate")
    print(f"  TGraph   (convert + network)         : {per['tgraph']:.3f} ms / candidate")
    print(f"  TGraph, features cached              : {report['tgraph_cached_ms_per_candidate']:.3f} ms / candidate")
    print(f"  ratio TGraph / XGBoost               : {report['ratio_tgraph_over_xgb']:.2f}x (target <= 3x)")
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(args.json, json.dumps(report, indent=2).encode())


if __name__ == "__main__":
    main()
