"""How the chunk size of ``predict`` trades memory for ranking agreement.

With configuration cross-attention a candidate's score depends on the candidates it is
scored with, so scoring a pool in chunks gives scores that are only comparable within a
chunk. This benchmark scores one real pool of random candidates (MetaSchedule's design
space of a 256^3 matmul, the shipped checkpoint) in one call (the reference) and in chunks
of each size, in random pool order, and reports per chunk size: Kendall tau against the
reference, the overlap of the top 16, and the peak resident memory of a fresh process that
does only that scoring. No timing is taken (it may run beside a measurement).

    python benchmarks/chunk_size.py [--candidates 4096] [--json benchmarks/results/chunk_size.json]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import platform
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

CHUNKS = (64, 128, 256, 512, 1024, 2048, 4096)


def pool_graph(count: int):
    """A configured graph of ``count`` random candidates of a 256^3 matmul, shuffled."""
    from tvm_tgraph.convert.tir import TirConverter
    from tvm_tgraph.testing import random_candidates
    from tvm_tgraph.tvm_env import make_target, register_light_tensor_intrin
    from tvm_tgraph.workloads import as_ir_module, matmul

    register_light_tensor_intrin()
    context, candidates = random_candidates(as_ir_module(matmul()), make_target({"kind": "llvm", "num-cores": 2}),
                                            count, task_name="matmul_256")
    order = np.random.default_rng(0).permutation(len(candidates))
    return TirConverter().convert(context, [candidates[i] for i in order])


def _score_in_child(args) -> tuple[np.ndarray, float]:
    """Scores and peak RSS (MiB) of scoring ``graph`` in chunks, in a fresh process."""
    import resource

    from cost_models.tgraph_cost_model import DEFAULT_CHECKPOINT
    from tvm_tgraph.checkpoint import load_checkpoint
    from tvm_tgraph.nn import predict_scores

    graph, chunk = args
    model, _ = load_checkpoint(DEFAULT_CHECKPOINT)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    scores = predict_scores(model, graph, chunk)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return scores, max(peak - before, 0) / 1024


def main() -> None:
    from scipy.stats import kendalltau

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--candidates", type=int, default=4096)
    parser.add_argument("--json", default=str(Path(__file__).parent / "results" / "chunk_size.json"))
    args = parser.parse_args()

    graph = pool_graph(args.candidates)
    count = graph.num_configs
    chunks = [c for c in CHUNKS if c < count] + [count]
    context = multiprocessing.get_context("spawn")
    results = {}
    for chunk in chunks:
        with context.Pool(1) as pool:
            results[chunk] = pool.map(_score_in_child, [(graph, chunk)])[0]
    reference = results[count][0]
    top = set(np.argsort(-reference)[:16])
    rows = []
    for chunk in chunks:
        scores, peak_mib = results[chunk]
        rows.append({"chunk_size": chunk, "kendall_tau_vs_one_call": float(kendalltau(scores, reference)[0]),
                     "top16_overlap": len(top & set(np.argsort(-scores)[:16])),
                     "extra_peak_rss_mib": round(peak_mib, 1)})
    report = {"command": "python benchmarks/chunk_size.py " + " ".join(sys.argv[1:]),
              "candidates": count, "workload": "matmul 256x256x256, random design-space samples",
              "cpu": platform.processor() or platform.machine(), "rows": rows}
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps(report, indent=1))
    print(f"{count} candidates; reference: one call over the whole pool")
    print(f"{'chunk':>6} {'tau vs one call':>16} {'top-16 overlap':>15} {'extra peak MiB':>15}")
    for row in rows:
        print(f"{row['chunk_size']:>6} {row['kendall_tau_vs_one_call']:>16.3f} {row['top16_overlap']:>12}/16 "
              f"{row['extra_peak_rss_mib']:>15.1f}")


if __name__ == "__main__":
    main()
