"""The ``tgraph`` command (also ``python -m tvm_tgraph``)."""

from __future__ import annotations

import argparse
import json
import logging
import shlex
import sys
import tempfile
from pathlib import Path

from .errors import TGraphError

TARGET_HELP = ('target as a JSON object, e.g. \'{"kind": "llvm", "num-cores": 2}\' '
               "(default: llvm on the host CPU, all physical cores)")


def _add_tune(sub) -> None:
    p = sub.add_parser(
        "tune", help="tune a workload with MetaSchedule and a chosen cost model",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="example:\n  tgraph tune matmul --cost-model tgraph --trials 64 --work-dir runs/mm\n"
               "  tgraph tune my_ops.py:conv --cost-model xgb --trials 128 --work-dir runs/conv",
    )
    p.add_argument("module", help="built-in workload name (see --list) or path/to/file.py:NAME")
    p.add_argument("--cost-model", choices=["tgraph", "xgb", "xgb-warm16", "random"], default="tgraph",
                   help="tgraph (default), xgb (TVM's XGBModel as shipped), xgb-warm16 "
                        "(XGBModel(num_warmup_samples=16)) or random")
    p.add_argument("--checkpoint", help="TGraph weights to use instead of the shipped checkpoint")
    p.add_argument("--trials", type=int, default=64, help="measurement budget (default 64)")
    p.add_argument("--trials-per-iter", type=int, default=16, help="candidates measured per round (default 16)")
    p.add_argument("--work-dir", required=True, help="directory for the JSON database and logs (appended)")
    p.add_argument("--target", help=TARGET_HELP)
    p.add_argument("--strategy", choices=["evolutionary", "pruning", "replay-trace"], default="evolutionary",
                   help="search strategy: MetaSchedule's evolutionary search (default), the pruning search "
                        "(search.PruningSearch: score a large pool, measure the top-k) or random replay")
    p.add_argument("--rpc-tracker", metavar="HOST:PORT",
                   help="measure on the RPC servers of this tracker instead of locally (see README, 'device farm')")
    p.add_argument("--rpc-key", default="local", help="device key the RPC servers registered with (default local)")
    p.add_argument("--rpc-workers", type=int, default=1, help="candidates measured at once over RPC (default 1)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.set_defaults(func=_cmd_tune)


def _cmd_tune(args) -> int:
    from .tuning import is_relax_module, make_cost_model, tune
    from .workloads import load_module

    mod = load_module(args.module)
    cost_model = make_cost_model(args.cost_model, seed=args.seed, checkpoint=args.checkpoint)
    runner = None
    if args.rpc_tracker:
        from .rpc import make_rpc_runner

        runner = make_rpc_runner(args.rpc_tracker, args.rpc_key, max_workers=args.rpc_workers)
    summary = tune(mod, cost_model, args.trials, args.work_dir, target=args.target, seed=args.seed,
                   trials_per_iter=args.trials_per_iter, strategy=args.strategy, runner=runner)
    print(f"{args.module} with {args.cost_model}: best latency {summary.best_latency_s * 1e3:.4f} ms"
          f"{' (sum over tasks)' if is_relax_module(mod) else ''}, first reached at trial {summary.best_trial} of "
          f"{summary.trials} ({summary.wall_s:.1f} s, {summary.cost_model_s:.1f} s in the cost model); "
          f"database in {summary.work_dir}")
    if is_relax_module(mod):
        from .end_to_end import measure_end_to_end
        from .tvm_env import make_target

        e2e = measure_end_to_end(mod, make_target(args.target), args.work_dir)
        print(f"end to end (Relax VM): tuned {e2e.tuned_s * 1e3:.4f} ms, untuned default build "
              f"{e2e.default_s * 1e3:.4f} ms: {e2e.speedup:.2f}x faster; outputs differ by at most {e2e.max_abs_diff:.2e}")
    return 0


def _add_demo(sub) -> None:
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
    from .tuning import tune
    from .workloads import load_module

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


def _add_collect(sub) -> None:
    p = sub.add_parser(
        "collect", help="measure candidates of the workload suite into a JSONDatabase (resumable)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="example:\n  tgraph collect --out data/raw --random-trials 64 --evolutionary-trials 192\n"
               "  tgraph collect --out data/raw --families transformer,op:matmul --list-tasks",
    )
    p.add_argument("--out", required=True, help="database directory (appended; re-running resumes)")
    p.add_argument("--random-trials", type=int, default=64, help="random design-space samples per task")
    p.add_argument("--evolutionary-trials", type=int, default=192, help="evolutionary-search trials per task")
    p.add_argument("--trials-per-iter", type=int, default=32)
    p.add_argument("--families", help="comma-separated families to collect (default: all)")
    p.add_argument("--list-tasks", action="store_true", help="list the suite's tasks and exit")
    p.add_argument("--card", help="write a markdown data card of --out to this file and exit (no measuring)")
    p.add_argument("--pack", help="write --out's database to this .tar.xz and exit (safe while collecting)")
    p.add_argument("--target", help=TARGET_HELP)
    p.add_argument("--seed", type=int, default=0)
    p.set_defaults(func=_cmd_collect)


def _cmd_collect(args) -> int:
    from .collect import CollectPlan, collect, data_card, default_suite, pack_database
    from .tvm_env import make_target

    if args.pack:
        print(f"packed {pack_database(args.out, args.pack)} records into {args.pack}")
        return 0
    if args.card:
        Path(args.card).write_text(data_card(args.out))
        print(f"wrote {args.card}")
        return 0
    target = make_target(args.target)
    suite = default_suite(target)
    if args.families:
        wanted = set(args.families.split(","))
        unknown = wanted - {task.family for task in suite}
        if unknown:
            raise ValueError(f"unknown families {sorted(unknown)}; known: {sorted({t.family for t in suite})}")
        suite = [task for task in suite if task.family in wanted]
    if args.list_tasks:
        print("\n".join(task.name for task in suite))
        return 0
    plan = CollectPlan(args.random_trials, args.evolutionary_trials, args.trials_per_iter, args.seed)
    meta = collect(args.out, suite, plan, target)
    print(f"collected into {args.out}: {len(suite)} tasks, {meta['seconds'] / 60:.1f} min in all runs")
    return 0


def _add_train(sub) -> None:
    p = sub.add_parser(
        "train", help="train TGraph on a collected database (validation split by task, early stopping)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="example:\n  tgraph train --db data/raw --holdout transformer --out ckpt/tgraph.safetensors --seed 0",
    )
    p.add_argument("--db", required=True, help="database written by `tgraph collect`")
    p.add_argument("--out", required=True, help="checkpoint to write (.safetensors; the card goes beside it as .json)")
    p.add_argument("--holdout", help="comma-separated families to leave out of training (for evaluation)")
    p.add_argument("--steps", type=int, default=3000)
    p.add_argument("--eval-every", type=int, default=100)
    p.add_argument("--patience", type=int, default=8)
    p.add_argument("--loss", choices=["hinge", "listmle"], default="hinge")
    p.add_argument("--no-cross-attention", action="store_true", help="ablation: no configuration cross-attention")
    p.add_argument("--graph-conv", choices=["sage", "linear"], default="sage")
    p.add_argument("--hidden", type=int, default=64)
    p.add_argument("--target", help=TARGET_HELP)
    p.add_argument("--seed", type=int, default=0)
    p.set_defaults(func=_cmd_train)


def _cmd_train(args) -> int:
    from .convert.tir import FEATURE_SCHEMA_VERSION, network_config
    from .dataset import configured_graphs, load_measured_tasks
    from .pretrain import PretrainConfig, train_checkpoint
    from .training import TrainConfig
    from .tvm_env import make_target

    graphs = configured_graphs(load_measured_tasks(args.db, make_target(args.target), exclude_families=args.holdout))
    config = PretrainConfig(
        steps=args.steps, eval_every=args.eval_every, patience=args.patience, seed=args.seed,
        network={"hidden": args.hidden, "graph_conv": args.graph_conv, "cross_attention": not args.no_cross_attention},
        train=TrainConfig(loss=args.loss),
    )
    card = train_checkpoint(graphs, list(graphs), config, network_config(**config.network), FEATURE_SCHEMA_VERSION,
                            args.out, data={"db": str(args.db), "held_out_families": args.holdout},
                            command="tgraph " + shlex.join(args.argv))
    history = card["history"]
    print(f"trained {history['steps']} steps on {len(card['training_data']['train_tasks'])} tasks; best "
          f"validation Kendall tau {history['best_val_kendall_tau']:.3f} at step {history['best_step']} "
          f"({len(card['training_data']['val_tasks'])} tasks); wrote {args.out} and its card")
    return 0


def _add_eval(sub) -> None:
    p = sub.add_parser(
        "eval", help="rank held-out tasks with TGraph, XGBoost and MLP; zero-shot and online",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="example:\n  tgraph eval --db data/raw --families transformer --model ckpt/tgraph.safetensors \\\n"
               "      --train-db data/raw --baselines xgb,mlp --json results.json --png scatter.png",
    )
    p.add_argument("--db", required=True, help="database with the tasks to rank")
    p.add_argument("--model", required=True, help="TGraph checkpoint")
    p.add_argument("--train-db", required=True, help="the data the checkpoint was trained on (trains the baselines)")
    p.add_argument("--families", help="evaluate only these families of --db (comma-separated); "
                                      "they are left out of --train-db")
    p.add_argument("--baselines", default="xgb,mlp", help="comma-separated: xgb, mlp (default both)")
    p.add_argument("--online-k", default="32,64", help="online settings: measured candidates given first")
    p.add_argument("--json", help="write the full report here")
    p.add_argument("--png", help="write predicted-vs-measured scatter plots here")
    p.add_argument("--target", help=TARGET_HELP)
    p.add_argument("--seed", type=int, default=0)
    p.set_defaults(func=_cmd_eval)


def _cmd_eval(args) -> int:
    from .dataset import load_measured_tasks
    from .evaluate import evaluate, format_table, plot_scatter
    from .tvm_env import make_target

    target = make_target(args.target)
    eval_tasks = load_measured_tasks(args.db, target, families=args.families)
    train_tasks = load_measured_tasks(args.train_db, target, exclude_families=args.families)
    if not eval_tasks:
        raise ValueError(f"no task of {args.db} matches --families {args.families}")
    baselines = tuple(b for b in args.baselines.split(",") if b)
    unknown = set(baselines) - {"xgb", "mlp"}
    if unknown:
        raise ValueError(f"unknown baselines {sorted(unknown)}: use xgb and/or mlp")
    report = evaluate(eval_tasks, train_tasks, args.model, baselines,
                      tuple(int(k) for k in args.online_k.split(",") if k), seed=args.seed)
    print(format_table(report))
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(report, indent=1))
    if args.png:
        plot_scatter(report, args.png)
    return 0


def _add_compare(sub) -> None:
    from .compare import BUDGETS, DEFAULT_METHODS, METHODS

    p = sub.add_parser(
        "compare", help="tune the same workloads with TGraph + pruning search, XGBoost and random search",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="example:\n  tgraph compare --workloads matmul,conv2d_nhwc --trials 256 --seeds 0,1,2 "
               "--out benchmarks/results/compare\n\nre-running the same command resumes: finished runs are kept",
    )
    p.add_argument("--workloads", default="matmul", help="comma-separated built-in names or file.py:NAME (default matmul)")
    p.add_argument("--methods", default=",".join(DEFAULT_METHODS), help=f"comma-separated, of: {', '.join(METHODS)}")
    p.add_argument("--trials", type=int, default=max(BUDGETS), help=f"budget per run (default {max(BUDGETS)})")
    p.add_argument("--trials-per-iter", type=int, default=32, help="candidates measured per round (default 32)")
    p.add_argument("--seeds", default="0,1,2", help="comma-separated seeds (default 0,1,2)")
    p.add_argument("--out", required=True, help="directory for the runs' databases, compare.{json,md,png}")
    p.add_argument("--target", help=TARGET_HELP)
    p.set_defaults(func=_cmd_compare)


def _cmd_compare(args) -> int:
    from .compare import BUDGETS, compare, format_markdown, plot_curves, summarise

    out = Path(args.out)
    results = compare(args.workloads.split(","), args.methods.split(","),
                      [int(s) for s in args.seeds.split(",")], args.trials, out, args.target, args.trials_per_iter)
    budgets = sorted({b for b in BUDGETS if b <= args.trials} | {args.trials})
    summary = summarise(results, budgets)
    table = format_markdown(summary, budgets)
    command = "tgraph " + shlex.join(args.argv)
    (out / "compare.json").write_text(json.dumps({"command": command, "summary": summary,
                                                  "runs": [r.__dict__ for r in results]}, indent=1))
    (out / "compare.md").write_text(f"Command: `{command}`\n\n{table}")
    plot_curves(results, out / "compare.png")
    print(table)
    print(f"wrote {out / 'compare.md'}, compare.json and compare.png")
    return 0


def _add_tpugraphs(sub) -> None:
    p = sub.add_parser(
        "tpugraphs", help="train and evaluate TGraph on TpuGraphs .npz files (the paper's dataset)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="examples:\n"
               "  tgraph tpugraphs train npz/layout/xla/random --out layout_xla_random.safetensors\n"
               "  tgraph tpugraphs eval npz/layout/xla/random --model layout_xla_random.safetensors\n"
               "  tgraph tpugraphs split-eval ../shared/data/tpugraphs/cleaned_alexnet.npz --json alexnet.json",
    )
    tp = p.add_subparsers(dest="tpugraphs_command", required=True)
    train = tp.add_parser("train", help="train on DIR/train (validation split by graph, early stopping)")
    train.add_argument("directory", help="a collection folder with train/ valid/ test/ of .npz files")
    train.add_argument("--out", required=True, help="checkpoint to write (.safetensors + .json card)")
    evaluate = tp.add_parser("eval", help="rank every graph of DIR/SPLIT: Kendall tau (layout), top-5 slowdown (tile)")
    evaluate.add_argument("directory")
    evaluate.add_argument("--model", required=True, help="checkpoint from `tgraph tpugraphs train`")
    evaluate.add_argument("--split", default="valid", help="folder to rank (default valid)")
    evaluate.add_argument("--chunk-size", type=int, default=128, help="configurations scored at once (bounds memory)")
    split = tp.add_parser("split-eval", help="one file: train on 80%% of its configurations, rank the other 20%%, "
                                             "against a linear model on the raw features")
    split.add_argument("file")
    split.add_argument("--train-fraction", type=float, default=0.8)
    for q in (train, split):
        q.add_argument("--steps", type=int, default=3000)
        q.add_argument("--eval-every", type=int, default=100)
        q.add_argument("--hidden", type=int, default=64)
        q.add_argument("--seed", type=int, default=0)
    for q in (evaluate, split):
        q.add_argument("--json", help="write the report here")
    p.set_defaults(func=_cmd_tpugraphs)


def _cmd_tpugraphs(args) -> int:
    from .pretrain import PretrainConfig
    from .tpugraphs import configuration_split_eval, evaluate_collection, load_collection, train_collection

    if args.tpugraphs_command == "train":
        config = PretrainConfig(steps=args.steps, eval_every=args.eval_every, seed=args.seed,
                                network={"hidden": args.hidden})
        card = train_collection(args.directory, args.out, config, command="tgraph " + shlex.join(args.argv))
        print(f"trained on {len(card['training_data']['train_tasks'])} graphs; best validation Kendall tau "
              f"{card['history']['best_val_kendall_tau']:.3f}; wrote {args.out}")
        return 0
    if args.tpugraphs_command == "eval":
        from .checkpoint import load_checkpoint
        from .convert.tpugraphs import feature_schema

        graphs = load_collection(args.directory, args.split)
        model, _ = load_checkpoint(args.model, feature_schema(next(iter(graphs.values()))))
        report = evaluate_collection(model, graphs, args.chunk_size)
        print(" ".join(f"{k} {v:.4f}" for k, v in report["mean"].items()) + f" (mean over {len(graphs)} graphs)")
    else:
        config = PretrainConfig(steps=args.steps, eval_every=args.eval_every, seed=args.seed,
                                network={"hidden": args.hidden})
        report = configuration_split_eval(args.file, config, args.train_fraction)
        report["command"] = "tgraph " + shlex.join(args.argv)
        print(f"{report['file']}: {report['test_configs']} held-out configurations of {report['configs']} distinct; "
              f"Kendall tau TGraph {report['tgraph']['kendall_tau']:.4f}, "
              f"linear model on raw features {report['linear']['kendall_tau']:.4f}")
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(report, indent=1))
    return 0


def _add_layout(sub) -> None:
    p = sub.add_parser(
        "layout", help="layout configurations of a Relax model: measure, train, evaluate, search",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="examples:\n"
               "  tgraph layout collect --model resnet3 --configs 240 --out runs/layouts\n"
               "  tgraph layout train runs/layouts --out layouts.safetensors\n"
               "  tgraph layout eval runs/layouts --model layouts.safetensors\n"
               "  tgraph layout search --model resnet3 --checkpoint layouts.safetensors --top-k 8",
    )
    lp = p.add_subparsers(dest="layout_command", required=True)
    collect = lp.add_parser("collect", help="measure random layout configurations end to end (appended, resumable)")
    collect.add_argument("--model", default="resnet3", help="resnet3 (default), resnet, mobilenet_v2 or file.py:NAME")
    collect.add_argument("--configs", type=int, default=240, help="distinct configurations to have measured")
    collect.add_argument("--out", required=True, help="data folder (space.json + measurements.jsonl)")
    collect.add_argument("--db", help="build with this tuning database's schedules (default: TVM's defaults)")
    train = lp.add_parser("train", help="train TGraph on measured layouts, 20%% of configurations held out")
    train.add_argument("folder")
    train.add_argument("--out", required=True, help="checkpoint to write (.safetensors + .json card)")
    train.add_argument("--steps", type=int, default=1500)
    train.add_argument("--eval-every", type=int, default=50)
    train.add_argument("--hidden", type=int, default=64)
    evaluate = lp.add_parser("eval", help="rank the checkpoint's held-out configurations")
    evaluate.add_argument("folder")
    evaluate.add_argument("--model", required=True, help="checkpoint from `tgraph layout train`")
    evaluate.add_argument("--all", action="store_true", help="rank every measured configuration instead")
    evaluate.add_argument("--json", help="write the report here")
    search = lp.add_parser("search", help="score many configurations, measure the top-k, print the fastest")
    search.add_argument("--model", default="resnet3")
    search.add_argument("--checkpoint", required=True, help="checkpoint from `tgraph layout train`")
    search.add_argument("--pool", type=int, default=1024, help="configurations scored (default 1024)")
    search.add_argument("--top-k", type=int, default=8, help="configurations measured (default 8)")
    search.add_argument("--db", help="build with this tuning database's schedules")
    for q in (collect, train, search):
        q.add_argument("--seed", type=int, default=0)
    for q in (collect, search):
        q.add_argument("--target", help=TARGET_HELP)
    p.set_defaults(func=_cmd_layout)


def _cmd_layout(args) -> int:
    from . import layout

    if args.layout_command == "collect":
        from .tvm_env import make_target

        measured = layout.collect_layouts(args.out, args.model, args.configs, make_target(args.target), args.seed, args.db)
        print(f"{args.out}: {len(measured.latency)} configurations measured; fastest "
              f"{measured.latency.min() * 1e3:.4f} ms, slowest {measured.latency.max() * 1e3:.4f} ms")
    elif args.layout_command == "train":
        from .pretrain import PretrainConfig

        config = PretrainConfig(steps=args.steps, eval_every=args.eval_every, seed=args.seed,
                                network={"hidden": args.hidden})
        card = layout.train_layout_model(args.folder, args.out, config, command="tgraph " + shlex.join(args.argv))
        print(f"trained on {card['training_data']['train_configs']} configurations; held-out "
              f"({len(card['training_data']['held_out_configs'])}) Kendall tau {card['held_out']['kendall_tau']:.4f}; "
              f"wrote {args.out}")
    elif args.layout_command == "eval":
        report = layout.evaluate_layout_model(args.folder, args.model, args.all)
        mean = report["mean"]
        print(f"{report['configs']} configurations: Kendall tau {mean['kendall_tau']:.4f}, top-1 {mean['top1']:.4f}, "
              f"top-5 {mean['top5']:.4f}, OPA {mean['opa']:.4f}")
        if args.json:
            Path(args.json).write_text(json.dumps(report, indent=1))
    else:
        from search.layout import layout_search

        from .checkpoint import load_checkpoint
        from .convert.relax_layout import FEATURE_SCHEMA_VERSION, LayoutSpace
        from .end_to_end import random_inputs
        from .tvm_env import make_target

        mod = layout.load_model(args.model)
        model, _ = load_checkpoint(args.checkpoint, FEATURE_SCHEMA_VERSION)
        result = layout_search(LayoutSpace(mod), model, make_target(args.target), random_inputs(mod),
                               args.pool, args.top_k, args.seed, args.db)
        print(f"scored {result.pool_size} configurations, measured {len(result.measured)}: fastest "
              f"{''.join(map(str, result.best_config))} at {result.best_latency_s * 1e3:.4f} ms")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tgraph", description="TGraph: a learned cost model and tuner for Apache TVM MetaSchedule.",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="show MetaSchedule's progress logs")
    parser.add_argument("--list", action="store_true", help="list the built-in workloads and exit")
    sub = parser.add_subparsers(dest="command")
    _add_tune(sub)
    _add_demo(sub)
    _add_collect(sub)
    _add_train(sub)
    _add_eval(sub)
    _add_compare(sub)
    _add_tpugraphs(sub)
    _add_layout(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")
    # MetaSchedule prints a task table to stdout at INFO unless its logger says otherwise.
    logging.getLogger("tvm.s_tir.meta_schedule").setLevel(logging.INFO if args.verbose else logging.WARNING)
    if args.list:
        from .workloads import MODEL_WORKLOADS, WORKLOADS

        print("\n".join(sorted(WORKLOADS) + [f"{name}  (whole model)" for name in sorted(MODEL_WORKLOADS)]))
        return 0
    if args.command is None:
        parser.print_help()
        return 2
    try:
        return args.func(args)
    except (TGraphError, FileNotFoundError, ValueError) as err:
        print(f"tgraph {args.command}: error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
