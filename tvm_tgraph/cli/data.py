"""Subcommands for measured data: ``collect``, ``train`` and ``eval``."""

from __future__ import annotations

import argparse
import shlex

from .common import TARGET_HELP, fraction, int_list, non_negative_int, positive_int, write_report


def add_collect(sub) -> None:
    p = sub.add_parser(
        "collect", help="measure candidates of the workload suite into a JSONDatabase (resumable)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="example:\n  tgraph collect --out data/raw --random-trials 64 --evolutionary-trials 192\n"
               "  tgraph collect --out data/raw --families transformer,op:matmul --list-tasks",
    )
    p.add_argument("--out", required=True, help="database directory (appended; re-running resumes)")
    p.add_argument("--random-trials", type=int, default=64, help="random design-space samples per task")
    p.add_argument("--evolutionary-trials", type=int, default=96, help="evolutionary-search trials per task")
    p.add_argument("--trials-per-iter", type=int, default=48, help="candidates measured per search round")
    p.add_argument("--families", help="comma-separated families to collect (default: all)")
    p.add_argument("--list-tasks", action="store_true", help="list the suite's tasks and exit")
    p.add_argument("--card", help="write a markdown data card of --out to this file and exit (no measuring)")
    p.add_argument("--pack", help="write --out's database to this .tar.xz and exit (safe while collecting)")
    p.add_argument("--target", help=TARGET_HELP)
    p.add_argument("--seed", type=int, default=0)
    p.set_defaults(func=_cmd_collect)


def _cmd_collect(args) -> int:
    from ..files import atomic_write_bytes
    from ..workflows.collect import CollectPlan, collect, data_card, default_suite, pack_database
    from ..tvm_env import make_target

    if args.pack:
        print(f"packed {pack_database(args.out, args.pack)} records into {args.pack}")
        return 0
    if args.card:
        atomic_write_bytes(args.card, data_card(args.out).encode())
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


def add_train(sub) -> None:
    p = sub.add_parser(
        "train", help="train TGraph on a collected database (validation split by task, early stopping)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="example:\n  tgraph train --db data/raw --holdout transformer --out ckpt/tgraph.safetensors --seed 0",
    )
    p.add_argument("--db", required=True, help="database written by `tgraph collect`")
    p.add_argument("--out", required=True, help="checkpoint to write (.safetensors; the card goes beside it as .json)")
    p.add_argument("--holdout", help="comma-separated families to leave out of training (for evaluation)")
    p.add_argument("--steps", type=int, default=12000)
    p.add_argument("--eval-every", type=int, default=100)
    p.add_argument("--patience", type=int, default=8)
    p.add_argument("--val-fraction", type=fraction, default=0.15,
                   help="share of the tasks held out for validation and early stopping (default 0.15); 0 trains "
                        "on every task for --steps steps (a checkpoint to ship, its steps chosen by cross-validation)")
    p.add_argument("--loss", choices=["hinge", "weighted_hinge", "listmle"], default="hinge",
                   help="ranking loss (default hinge; weighted_hinge weighs each pair by how far apart its "
                        "runtimes are; see tvm_tgraph.losses)")
    p.add_argument("--lr-schedule", choices=["constant", "cosine"], default="constant",
                   help="learning rate over --steps (default constant; cosine: 100 warm-up steps, then "
                        "decay to 0 at the last step)")
    p.add_argument("--weight-average", type=fraction, default=0.999,
                   help="validate and keep the exponential moving average of the weights, with this decay "
                        "(default 0.999, the shipped recipe: roughly the last 1,000 steps); 0: the weights themselves")
    p.add_argument("--forks", type=positive_int,
                   help="train the second half of the steps this many times, each copy from the first half's "
                        "weights with its own draw of tasks, and keep the mean of the copies' weights (needs "
                        "--val-fraction 0; default 2 with --val-fraction 0, the shipped recipe, else 1)")
    p.add_argument("--cross-attention", choices=["multihead", "softmax", "none"], default="multihead",
                   help="how configurations attend to each other: multi-head (default), the reference code's "
                        "parameter-free softmax, or none (ablation)")
    p.add_argument("--graph-conv", choices=["sage", "linear"], default="sage")
    p.add_argument("--hidden", type=int, default=64)
    p.add_argument("--value-bins", type=non_negative_int, default=160,
                   help="each configuration feature's value, quantised to steps of 1/64, also selects a learned "
                        "embedding, VALUE_BINS bins per feature (default 160, the shipped recipe; see "
                        "tvm_tgraph.nn.TGraphConfig); 0: the features enter the network linearly only")
    p.add_argument("--teacher", help="a checkpoint to distil (a seed ensemble trained the same way, say): the "
                   "network also learns the teacher's order of every training task's configurations")
    p.add_argument("--distil-weight", type=fraction, default=0.5,
                   help="with --teacher, the share of the loss that asks for the teacher's order (default 0.5; "
                        "the rest asks for the measured order)")
    p.add_argument("--target", help=TARGET_HELP)
    p.add_argument("--seed", type=int_list, default=[0], metavar="SEED[,SEED...]",
                   help="seed of the network (default 0); several, comma-separated, train one network per seed "
                        "on the same split and save them as one seed ensemble (its score: the mean of the "
                        "members' standardised scores)")
    p.set_defaults(func=_cmd_train)


def forks_option(args) -> int:
    """``tgraph train``'s forks: ``--forks``, or by default 2 without validation tasks (the shipped
    recipe) and 1 with them (early stopping keeps one network's weights)."""
    if args.forks is None:
        return 2 if args.val_fraction == 0 else 1
    if args.forks > 1 and args.val_fraction > 0:
        raise ValueError(f"--forks {args.forks} needs --val-fraction 0 (forks keep the mean of their weights, "
                         "not the weights validation picks)")
    return args.forks


def _cmd_train(args) -> int:
    from ..checkpoint import load_checkpoint
    from ..convert.tir import FEATURE_SCHEMA
    from ..pretrain import PretrainConfig
    from ..training import TrainConfig
    from ..tvm_env import make_target
    from ..workflows.pretraining import train_tir_checkpoint

    config = PretrainConfig(
        steps=args.steps, eval_every=args.eval_every, patience=args.patience, val_fraction=args.val_fraction,
        seed=args.seed[0], forks=forks_option(args),
        network={"hidden": args.hidden, "graph_conv": args.graph_conv, "cross_attention": args.cross_attention,
                 "value_bins": args.value_bins},
        train=TrainConfig(loss=args.loss, lr_schedule=args.lr_schedule, weight_average=args.weight_average,
                          distil_weight=args.distil_weight if args.teacher else 0.0),
    )
    teacher, distilled = None, {}
    if args.teacher:
        teacher, teacher_card = load_checkpoint(args.teacher, FEATURE_SCHEMA.version)
        distilled = {"distilled_from": {"path": args.teacher, "weights_sha256": teacher_card["weights_sha256"]}}
    card = train_tir_checkpoint(args.db, args.out, config, args.holdout, make_target(args.target),
                                command="tgraph " + shlex.join(args.argv), seeds=args.seed, teacher=teacher,
                                **distilled)
    data = card["training_data"]
    for seed, history in zip(args.seed, card["history"] if len(args.seed) > 1 else [card["history"]]):
        validation = (f"; best validation Kendall tau {history['best_val_kendall_tau']:.3f} at step "
                      f"{history['best_step']} ({len(data['val_tasks'])} tasks)" if data["val_tasks"] else "")
        print(f"seed {seed}: trained {history['steps']} steps on {len(data['train_tasks'])} tasks{validation}")
    if data["val_tasks"]:
        print(f"validation Kendall tau of the {'ensemble' if len(args.seed) > 1 else 'network'}: "
              f"{card['validation']['kendall_tau']:.3f}")
    print(f"wrote {args.out}")
    return 0


def add_eval(sub) -> None:
    p = sub.add_parser(
        "eval", help="rank held-out tasks with TGraph, XGBoost and MLP; zero-shot and online",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="example:\n  tgraph eval --db data/raw --families transformer --checkpoint ckpt/tgraph.safetensors \\\n"
               "      --train-db data/raw --baselines xgb,mlp --json results.json --png scatter.png",
    )
    p.add_argument("--db", required=True, help="database with the tasks to rank")
    p.add_argument("--checkpoint", required=True, help="TGraph checkpoint")
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
    from ..measured_tasks import load_measured_tasks
    from ..workflows.evaluate import evaluate, format_table, plot_scatter
    from ..tvm_env import make_target

    target = make_target(args.target)
    eval_tasks = load_measured_tasks(args.db, target, families=args.families)
    train_tasks = load_measured_tasks(args.train_db, target, exclude_families=args.families)
    if not eval_tasks:
        raise ValueError(f"no task of {args.db} with at least two measured candidates"
                         + (f" matches --families {args.families}" if args.families else ""))
    if not train_tasks:
        raise ValueError(f"no task of {args.train_db} with at least two measured candidates"
                         + (f" is outside --families {args.families}" if args.families else "")
                         + ": the baselines have nothing to train on")
    baselines = tuple(b for b in args.baselines.split(",") if b)
    unknown = set(baselines) - {"xgb", "mlp"}
    if unknown:
        raise ValueError(f"unknown baselines {sorted(unknown)}: use xgb and/or mlp")
    report = evaluate(eval_tasks, train_tasks, args.checkpoint, baselines,
                      tuple(int(k) for k in args.online_k.split(",") if k), seed=args.seed)
    print(format_table(report))
    write_report(args.json, report)
    if args.png:
        plot_scatter(report, args.png)
    return 0
