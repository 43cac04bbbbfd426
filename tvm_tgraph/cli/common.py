"""What the subcommands share."""

TARGET_HELP = ('target as a JSON object, e.g. \'{"kind": "llvm", "num-cores": 2}\' '
               "(default: llvm on the host CPU, all physical cores)")
