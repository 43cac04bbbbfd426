"""Subcommands that tune: ``tune``, ``demo`` and ``compare``."""

from __future__ import annotations

import argparse
import shlex
import tempfile
from pathlib import Path

from ..files import atomic_write_bytes
from ..names import COST_MODELS, STRATEGIES
from .common import TARGET_HELP, int_list, write_report


def add_tune(sub) -> None:
    p = sub.add_parser(
        "tune", help="tune a workload with MetaSchedule and a chosen cost model",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="example:\n  tgraph tune matmul --cost-model tgraph --trials 64 --work-dir runs/mm\n"
               "  tgraph tune my_ops.py:conv --cost-model xgb --trials 128 --work-dir runs/conv",
    )
    p.add_argument("module", help="built-in workload name (see --list) or path/to/file.py:NAME")
    p.add_argument("--cost-model", choices=COST_MODELS,
                   default="tgraph",
                   help="tgraph (default), tgraph-frozen (the pretrained network without online fine-tuning: "
                        "cheaper per round), tgraph-xgb (the pretrained network blended online with its "
                        "XGBoost fallback instead of fine-tuned), xgb (TVM's XGBoost as shipped), xgb-warm16 "
                        "(XGBModel(num_warmup_samples=16)) or random")
    p.add_argument("--checkpoint", help="TGraph weights to use instead of the shipped checkpoint")
    p.add_argument("--trials", type=int, default=64, help="measurement budget (default 64)")
    p.add_argument("--trials-per-iter", type=int, default=16, help="candidates measured per round (default 16)")
    p.add_argument("--work-dir", required=True, help="directory for the JSON database and logs (appended)")
    p.add_argument("--target", help=TARGET_HELP)
    p.add_argument("--strategy", default="evolutionary",
                   choices=STRATEGIES,
                   help="search strategy: MetaSchedule's evolutionary search (default), the pruning search "
                        "(search.PruningSearch: score a large pool, measure the top-k; -light screens a quarter "
                        "as much, -fast scores each candidate of a round once, -fast-256 half as many, "
                        "-light-ucb picks its explorers by the TGraph cost model's uncertainty) or random replay")
    p.add_argument("--rpc-tracker", metavar="HOST:PORT",
                   help="measure on the RPC servers of this tracker instead of locally (see README, 'device farm')")
    p.add_argument("--rpc-key", default="local", help="device key the RPC servers registered with (default local)")
    p.add_argument("--rpc-workers", type=int, default=1, help="candidates measured at once over RPC (default 1)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.set_defaults(func=_cmd_tune)


def _cmd_tune(args) -> int:
    from ..workflows.tuning import is_relax_module, make_cost_model, tune
    from ..workloads import load_module

    mod = load_module(args.module)
    cost_model = make_cost_model(args.cost_model, seed=args.seed, checkpoint=args.checkpoint)
    runner = None
    if args.rpc_tracker:
        from ..rpc import make_rpc_runner

        runner = make_rpc_runner(args.rpc_tracker, args.rpc_key, max_workers=args.rpc_workers)
    try:
        summary = tune(mod, cost_model, args.trials, args.work_dir, target=args.target, seed=args.seed,
                       trials_per_iter=args.trials_per_iter, strategy=args.strategy, runner=runner)
    except RuntimeError as err:   # TVM's errors (InternalError, ...) derive from it
        lines = [line for line in str(err).splitlines() if line.strip()]
        raise ValueError(f"MetaSchedule cannot tune {args.module}: {lines[-1] if lines else type(err).__name__}"
                         f" (tgraph -v tune ... shows its log)") from None
    print(f"{args.module} with {args.cost_model}: best latency {summary.best_latency_s * 1e3:.4f} ms"
          f"{' (sum over tasks)' if is_relax_module(mod) else ''}, first reached at trial {summary.best_trial} of "
          f"{summary.trials} ({summary.wall_s:.1f} s, {summary.cost_model_s:.1f} s in the cost model); "
          f"database in {summary.work_dir}")
    scored = getattr(cost_model, "scored", None)
    if scored is not None:
        print(f"ranked by the TGraph network: {scored['network']} candidates; by the XGBoost fallback: "
              f"{scored['fallback']} candidates")
    if is_relax_module(mod):
        from ..tvm_env import make_target
        from ..workflows.end_to_end import untuned
        from ..workflows.schedule_guard import GUARD_FILE, guard

        target = make_target(args.target)
        base = untuned(mod, target)
        latency, diff, decision = guard(mod, target, args.work_dir, base)
        if decision.candidates:
            print(f"in-model guard: {len(decision.candidates)} element-wise tasks, model {decision.tuned_s * 1e3:.4f} ms "
                  f"with their tuned schedules, {decision.guarded_s * 1e3:.4f} ms with TVM's default: "
                  f"{'default' if decision.default_tasks else 'tuned'} kept ({Path(args.work_dir) / GUARD_FILE})")
        print(f"end to end (Relax VM): tuned {latency * 1e3:.4f} ms, untuned default build "
              f"{base.latency_s * 1e3:.4f} ms: {base.latency_s / latency:.2f}x faster; outputs differ by at most "
              f"{diff:.2e}")
    return 0


def add_demo(sub) -> None:
    p = sub.add_parser(
        "demo", help="tune one workload with TGraph and with XGBoost, same budget and seed, side by side",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="example:\n  tgraph demo --workload matmul --trials 64",
    )
    p.add_argument("--workload", default="matmul", help="built-in workload (default matmul, 256^3)")
    p.add_argument("--trials", type=int, default=64, help="budget of each run (default 64)")
    p.add_argument("--work-dir", help="where both databases go (default: a new temporary directory)")
    p.add_argument("--target", help=TARGET_HELP)
    p.add_argument("--seed", type=int, default=0)
    p.set_defaults(func=_cmd_demo)


def _cmd_demo(args) -> int:
    from ..workflows.tuning import tune
    from ..workloads import load_module

    root = Path(args.work_dir or tempfile.mkdtemp(prefix="tgraph_demo_"))
    rows = []
    for name in ("tgraph", "xgb", "xgb-warm16"):
        print(f"== tuning {args.workload} with {name}, {args.trials} trials ...", flush=True)
        summary = tune(load_module(args.workload), name, args.trials, root / name,
                       target=args.target, seed=args.seed)
        rows.append((name, summary))
    print(f"\n{args.workload}: {args.trials} trials each, seed {args.seed}, same builder and runner")
    print(f"{'cost model':<12} {'best ms':>10} {'at trial':>9} {'wall s':>8}  vs xgb")
    xgb_best = rows[1][1].best_latency_s
    for name, s in rows:
        print(f"{name:<12} {s.best_latency_s * 1e3:>10.4f} {s.best_trial:>9} {s.wall_s:>8.1f}  "
              f"{s.best_latency_s / xgb_best:>5.2f}x")
    print(f"databases: {root}")
    return 0


def add_compare(sub) -> None:
    from ..workflows.compare import BUDGETS, DEFAULT_METHODS, METHODS, ROUND_ROBIN
    from ..workflows.model_compare import CHECKPOINTS, DEFAULT_MODEL_METHODS

    p = sub.add_parser(
        "compare", help="tune the same operators or whole models with TGraph, XGBoost and random search",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="examples:\n  tgraph compare --workloads matmul,conv2d_nhwc --trials 256 --seeds 0,1,2 "
               "--out benchmarks/results/compare\n"
               "  tgraph compare --models model_resnet --trials-per-task 32 --seeds 0,1,2 "
               "--out benchmarks/results/compare_models\n\n"
               "re-running the same command resumes: finished runs are kept",
    )
    what = p.add_mutually_exclusive_group()
    what.add_argument("--workloads", default="matmul",
                      help="operators: comma-separated built-in names or file.py:NAME (default matmul)")
    what.add_argument("--models",
                      help="whole models instead: comma-separated built-in models (model_resnet, ...) or file.py:NAME "
                           "of a Relax IRModule; all tasks share one budget and the model is timed end to end")
    p.add_argument("--methods", help=f"comma-separated, of: {', '.join(METHODS)} (default: "
                                     f"{','.join(DEFAULT_METHODS)}; with --models {','.join(DEFAULT_MODEL_METHODS)}); "
                                     f"with --models, a method ending in {ROUND_ROBIN} gives the tasks the budget "
                                     "in turn instead of MetaSchedule's default gradient task scheduler")
    p.add_argument("--trials", type=int, default=max(BUDGETS), help=f"operators: budget per run (default {max(BUDGETS)})")
    p.add_argument("--trials-per-task", type=int, default=max(CHECKPOINTS),
                   help=f"models: budget per run = this x the model's tasks (default {max(CHECKPOINTS)})")
    p.add_argument("--checkpoints", type=int_list, default=list(CHECKPOINTS),
                   help="models: trials per task at which the model is built and timed end to end "
                        f"(default {','.join(map(str, CHECKPOINTS))})")
    p.add_argument("--trials-per-iter", type=int,
                   help="candidates measured per round (default 32 for operators, 16 for models)")
    p.add_argument("--seeds", type=int_list, default=[0, 1, 2], help="comma-separated seeds (default 0,1,2)")
    p.add_argument("--out", required=True, help="directory for the runs' databases and the report "
                                                "(compare.{json,md,png}; with --models compare_models.*)")
    p.add_argument("--checkpoint", help="weights for the TGraph methods instead of the shipped checkpoint (give each "
                                        "checkpoint its own --out: finished runs are resumed by method and seed)")
    p.add_argument("--target", help=TARGET_HELP)
    p.set_defaults(func=_cmd_compare)


def _write_report(out: Path, stem: str, command: str, table: str, report: dict) -> None:
    write_report(str(out / f"{stem}.json"), {"command": command, **report})
    atomic_write_bytes(out / f"{stem}.md", f"Command: `{command}`\n\n{table}".encode())
    print(table)
    print(f"wrote {out / stem}.md, {stem}.json and {stem}.png")


def _cmd_compare(args) -> int:
    from ..tvm_env import host_cpu_names

    out = Path(args.out)
    command = "tgraph " + shlex.join(args.argv)
    if args.models:
        return _compare_models(args, out, command)
    from ..workflows.compare import (BUDGETS, DEFAULT_METHODS, compare, format_markdown, plot_curves, seen_in_training,
                                     summarise)
    from ..workloads import load_module

    methods = args.methods.split(",") if args.methods else list(DEFAULT_METHODS)
    results = compare(args.workloads.split(","), methods, args.seeds, args.trials, out, args.target,
                      args.trials_per_iter or 32, args.checkpoint)
    budgets = sorted({b for b in BUDGETS if b <= args.trials} | {args.trials})
    summary = summarise(results, budgets)
    seen = seen_in_training({name: [(name, load_module(name), 1)] for name in summary}, args.checkpoint)
    plot_curves(results, out / "compare.png")
    _write_report(out, "compare", command, format_markdown(summary, budgets, seen),
                  {"cpu": host_cpu_names(), "seen_in_training": seen, "summary": summary,
                   "runs": [r.__dict__ for r in results]})
    return 0


def _compare_models(args, out: Path, command: str) -> int:
    from ..workflows.model_compare import (DEFAULT_MODEL_METHODS, compare_models, format_models_markdown,
                                           plot_model_curves, summarise_models)

    methods = args.methods.split(",") if args.methods else list(DEFAULT_MODEL_METHODS)
    checkpoints = tuple(sorted(set(args.checkpoints)))
    results, untuned_s, seen = compare_models(args.models.split(","), methods, args.seeds, args.trials_per_task,
                                              checkpoints, out, args.target, args.trials_per_iter or 16,
                                              args.checkpoint)
    summary = summarise_models(results)
    plot_model_curves(results, out / "compare_models.png", untuned_s)
    _write_report(out, "compare_models", command, format_models_markdown(summary, untuned_s, seen),
                  {"untuned_s": untuned_s, "seen_in_training": seen, "summary": summary,
                   "runs": [r.__dict__ for r in results]})
    return 0
