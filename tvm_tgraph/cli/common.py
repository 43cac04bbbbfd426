"""What the subcommands share."""

import argparse
import json

from ..files import atomic_write_bytes

TARGET_HELP = ('target as a JSON object, e.g. \'{"kind": "llvm", "num-cores": 2}\' '
               "(default: llvm on the host CPU, all physical cores)")


def write_report(path: str | None, report: dict) -> None:
    """Write ``report`` as JSON to ``path`` (its folder created; replaced atomically), if a path was given."""
    if path:
        atomic_write_bytes(path, json.dumps(report, indent=1).encode())


def fraction(text: str) -> float:
    """An argparse type: a share in [0, 1)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0 <= value < 1:
        raise argparse.ArgumentTypeError(f"{text} is not in [0, 1)")
    return value


def non_negative_int(text: str) -> int:
    """An argparse type: an integer, 0 or more."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text} is negative")
    return value


def positive_int(text: str) -> int:
    """An argparse type: an integer, 1 or more."""
    value = non_negative_int(text)
    if value == 0:
        raise argparse.ArgumentTypeError("0 is not positive")
    return value


def int_list(text: str) -> list[int]:
    """An argparse type: comma-separated non-negative integers, e.g. ``0,1,2``."""
    return [non_negative_int(part) for part in text.split(",")]
