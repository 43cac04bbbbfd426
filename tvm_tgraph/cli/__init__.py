"""The ``tgraph`` command (also ``python -m tvm_tgraph``): one module per group of subcommands."""

from __future__ import annotations

import argparse
import logging
import sys

from ..errors import TGraphError
from . import data, graph_level, tuning


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tgraph", description="TGraph: a learned cost model and tuner for Apache TVM MetaSchedule.",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="show MetaSchedule's progress logs")
    parser.add_argument("--list", action="store_true", help="list the built-in workloads and exit")
    sub = parser.add_subparsers(dest="command")
    for add in (tuning.add_tune, tuning.add_demo, data.add_collect, data.add_train, data.add_eval,
                tuning.add_compare, graph_level.add_tpugraphs, graph_level.add_layout):
        add(sub)
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
        from ..workloads import MODEL_WORKLOADS, WORKLOADS

        print("\n".join(sorted(WORKLOADS) + [f"{name}  (whole model)" for name in sorted(MODEL_WORKLOADS)]))
        return 0
    if args.command is None:
        parser.print_help()
        return 2
    try:
        return args.func(args)
    except (TGraphError, OSError, ValueError) as err:
        message = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        print(f"tgraph {args.command}: error: {message}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
