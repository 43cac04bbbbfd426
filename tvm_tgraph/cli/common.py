"""What the subcommands share."""

import json
from pathlib import Path

TARGET_HELP = ('target as a JSON object, e.g. \'{"kind": "llvm", "num-cores": 2}\' '
               "(default: llvm on the host CPU, all physical cores)")


def write_report(path: str | None, report: dict) -> None:
    """Write ``report`` as JSON to ``path`` (its folder created), if a path was given."""
    if path:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(json.dumps(report, indent=1))
