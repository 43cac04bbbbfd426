"""Subcommands for graph-level layout configurations: ``layout`` and ``tpugraphs``."""

from __future__ import annotations

import argparse
import shlex

from .common import TARGET_HELP, write_report


def add_tpugraphs(sub) -> None:
    p = sub.add_parser(
        "tpugraphs", help="train and evaluate TGraph on TpuGraphs .npz files (the paper's dataset)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="examples:\n"
               "  tgraph tpugraphs train npz/layout/xla/random --out layout_xla_random.safetensors\n"
               "  tgraph tpugraphs eval npz/layout/xla/random --checkpoint layout_xla_random.safetensors\n"
               "  tgraph tpugraphs split-eval ../shared/data/tpugraphs/cleaned_alexnet.npz --json alexnet.json",
    )
    tp = p.add_subparsers(dest="tpugraphs_command", required=True)
    train = tp.add_parser("train", help="train on DIR/train (validation split by graph, early stopping)")
    train.add_argument("directory", help="a collection folder with train/ valid/ test/ of .npz files")
    train.add_argument("--out", required=True, help="checkpoint to write (.safetensors + .json card)")
    evaluate = tp.add_parser("eval", help="rank every graph of DIR/SPLIT: Kendall tau (layout), top-5 slowdown (tile)")
    evaluate.add_argument("directory")
    evaluate.add_argument("--checkpoint", required=True, help="checkpoint from `tgraph tpugraphs train`")
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
    train.set_defaults(func=_cmd_tpugraphs_train)
    evaluate.set_defaults(func=_cmd_tpugraphs_eval)
    split.set_defaults(func=_cmd_tpugraphs_split_eval)


def _pretrain_config(args):
    """The training settings given by ``--steps --eval-every --hidden --seed``."""
    from ..pretrain import PretrainConfig

    return PretrainConfig(steps=args.steps, eval_every=args.eval_every, seed=args.seed, network={"hidden": args.hidden})


def _cmd_tpugraphs_train(args) -> int:
    from ..workflows.tpugraphs import train_collection

    card = train_collection(args.directory, args.out, _pretrain_config(args), command="tgraph " + shlex.join(args.argv))
    print(f"trained on {len(card['training_data']['train_tasks'])} graphs; best validation Kendall tau "
          f"{card['history']['best_val_kendall_tau']:.3f}; wrote {args.out}")
    return 0


def _cmd_tpugraphs_eval(args) -> int:
    from ..workflows.tpugraphs import evaluate_collection_checkpoint

    report = evaluate_collection_checkpoint(args.directory, args.split, args.checkpoint, args.chunk_size)
    print(" ".join(f"{k} {v:.4f}" for k, v in report["mean"].items()) + f" (mean over {len(report['per_graph'])} graphs)")
    write_report(args.json, report)
    return 0


def _cmd_tpugraphs_split_eval(args) -> int:
    from ..workflows.tpugraphs import configuration_split_eval

    report = configuration_split_eval(args.file, _pretrain_config(args), args.train_fraction)
    report["command"] = "tgraph " + shlex.join(args.argv)
    print(f"{report['file']}: {report['test_configs']} held-out configurations of {report['configs']} distinct; "
          f"Kendall tau TGraph {report['tgraph']['kendall_tau']:.4f}, "
          f"linear model on raw features {report['linear']['kendall_tau']:.4f}")
    write_report(args.json, report)
    return 0


def add_layout(sub) -> None:
    p = sub.add_parser(
        "layout", help="layout configurations of a Relax model: measure, train, evaluate, search",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="examples:\n"
               "  tgraph layout collect --model resnet3 --configs 240 --out runs/layouts\n"
               "  tgraph layout train runs/layouts --out layouts.safetensors\n"
               "  tgraph layout eval runs/layouts --checkpoint layouts.safetensors\n"
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
    evaluate.add_argument("--checkpoint", required=True, help="checkpoint from `tgraph layout train`")
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
    collect.set_defaults(func=_cmd_layout_collect)
    train.set_defaults(func=_cmd_layout_train)
    evaluate.set_defaults(func=_cmd_layout_eval)
    search.set_defaults(func=_cmd_layout_search)


def _cmd_layout_collect(args) -> int:
    from ..tvm_env import make_target
    from ..workflows import layout

    measured = layout.collect_layouts(args.out, args.model, args.configs, make_target(args.target), args.seed, args.db)
    print(f"{args.out}: {len(measured.latency)} configurations measured; fastest "
          f"{measured.latency.min() * 1e3:.4f} ms, slowest {measured.latency.max() * 1e3:.4f} ms")
    return 0


def _cmd_layout_train(args) -> int:
    from ..workflows import layout

    card = layout.train_layout_model(args.folder, args.out, _pretrain_config(args), command="tgraph " + shlex.join(args.argv))
    print(f"trained on {card['training_data']['train_configs']} configurations; held-out "
          f"({len(card['training_data']['held_out_configs'])}) Kendall tau {card['held_out']['kendall_tau']:.4f}; "
          f"wrote {args.out}")
    return 0


def _cmd_layout_eval(args) -> int:
    from ..workflows import layout

    report = layout.evaluate_layout_model(args.folder, args.checkpoint, args.all)
    mean = report["mean"]
    print(f"{report['configs']} configurations: Kendall tau {mean['kendall_tau']:.4f}, top-1 {mean['top1']:.4f}, "
          f"top-5 {mean['top5']:.4f}, OPA {mean['opa']:.4f}")
    write_report(args.json, report)
    return 0


def _cmd_layout_search(args) -> int:
    from ..tvm_env import make_target
    from ..workflows import layout

    result = layout.search_layouts(args.model, args.checkpoint, make_target(args.target), args.pool, args.top_k,
                                   args.seed, args.db)
    print(f"scored {result.pool_size} configurations, measured {len(result.measured)}: fastest "
          f"{''.join(map(str, result.best_config))} at {result.best_latency_s * 1e3:.4f} ms")
    return 0
