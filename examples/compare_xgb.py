"""Tune the same workloads with TGraph + pruning search and with TVM's XGBoost, side by side.

Every method gets the same workloads, budget, seeds, builder and runner: TGraph with the
pruning search, XGBoost with MetaSchedule's evolutionary search as users get it
(``XGBModel()``, random until 100 samples) and as the stronger baseline
(``XGBModel(num_warmup_samples=16)``), and random search. Writes tuning curves
(``compare.png``), a table (``compare.md``) and everything measured (``compare.json``).
Re-running resumes: finished runs are read back, not measured again.

    python examples/compare_xgb.py --workloads matmul,conv2d_nhwc --trials 256 --seeds 0,1,2 \
        --out benchmarks/results/compare

It is ``tgraph compare`` with these defaults; ``tgraph compare --help`` lists the options.
"""

import sys

from tvm_tgraph.cli import main

if __name__ == "__main__":
    defaults = ["--workloads", "matmul,conv2d_nhwc", "--trials", "256", "--seeds", "0,1,2",
                "--out", "benchmarks/results/compare"]
    sys.exit(main(["compare", *defaults, *sys.argv[1:]]))
