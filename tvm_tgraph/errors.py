"""Errors raised by tvm-tgraph, each naming what is wrong with the input."""


class TGraphError(Exception):
    """Base class of the project's errors."""


class UnsupportedProgramError(TGraphError):
    """A program (or one of its constructs) the converter cannot represent."""


class CheckpointError(TGraphError):
    """A checkpoint that is missing, corrupt, or incompatible with this version."""


class RecordError(TGraphError):
    """A tuning database file that is missing or malformed."""
