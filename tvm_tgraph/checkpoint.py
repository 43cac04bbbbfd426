"""Checkpoints: safetensors weights plus a JSON model card, written atomically.

``model.safetensors`` holds the state dict (no pickle anywhere); ``model.json`` beside it
holds the card: format, package version, feature schema, network config, the SHA-256 of
the weights, and whatever the trainer adds (training data, metrics, seed). Loading checks
all of it and raises :class:`~tvm_tgraph.errors.CheckpointError` naming the problem.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path

from . import __version__
from .errors import CheckpointError
from .nn import TGraphConfig, TGraphNet

FORMAT = "tvm-tgraph-checkpoint-1"


def card_path(weights_path: str | os.PathLike) -> Path:
    """The model card that belongs to a weights file (same name, ``.json``)."""
    return Path(weights_path).with_suffix(".json")


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> None:
    """Write ``data`` to ``path`` so that readers see the old file or the new one, whole."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    os.chmod(tmp, 0o644)   # mkstemp makes files private; checkpoints are shared
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def save_checkpoint(path: str | os.PathLike, model: TGraphNet, feature_schema: str, **card_fields) -> dict:
    """Save ``model`` to ``path`` (safetensors) and its card to ``path`` with ``.json``.

    Returns
    -------
    dict
        The model card written.
    """
    from safetensors.torch import save

    weights = save({k: v.detach().contiguous() for k, v in model.state_dict().items()})
    card = {
        "format": FORMAT,
        "tvm_tgraph_version": __version__,
        "feature_schema": feature_schema,
        "model_config": model.config.to_dict(),
        "weights_sha256": hashlib.sha256(weights).hexdigest(),
        **card_fields,
    }
    atomic_write_bytes(path, weights)
    atomic_write_bytes(card_path(path), json.dumps(card, indent=2, sort_keys=True).encode())
    return card


def load_checkpoint(path: str | os.PathLike, feature_schema: str | None = None) -> tuple[TGraphNet, dict]:
    """Load a checkpoint written by :func:`save_checkpoint`.

    Parameters
    ----------
    path : path-like
        The ``.safetensors`` file.
    feature_schema : str, optional
        Refuse a checkpoint trained on another feature schema.

    Returns
    -------
    (TGraphNet, dict)
        The network in eval mode and its card.

    Raises
    ------
    CheckpointError
        Missing file, unreadable or corrupt card or weights, weights that do not match the
        card, another feature schema, or a state dict that does not fit the network.
    """
    from safetensors.torch import load

    path = Path(path)
    card_file = card_path(path)
    for needed in (path, card_file):
        if not needed.is_file():
            raise CheckpointError(f"checkpoint file {needed} does not exist")
    try:
        card = json.loads(card_file.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise CheckpointError(f"model card {card_file} is not valid JSON: {err}") from None
    if not isinstance(card, dict) or card.get("format") != FORMAT:
        raise CheckpointError(f"{card_file} is not a tvm-tgraph model card (format {FORMAT!r} expected)")
    if feature_schema is not None and card.get("feature_schema") != feature_schema:
        raise CheckpointError(
            f"checkpoint {path} was trained on feature schema {card.get('feature_schema')!r}; "
            f"this version of tvm-tgraph produces {feature_schema!r}: retrain it with `tgraph train`"
        )
    data = path.read_bytes()
    if hashlib.sha256(data).hexdigest() != card.get("weights_sha256"):
        raise CheckpointError(f"weights {path} do not match their model card (corrupt or partly written)")
    try:
        state = load(data)
        model = TGraphNet(TGraphConfig(**card["model_config"]))
        model.load_state_dict(state, strict=True)
    except Exception as err:  # safetensors and torch raise several types for bad files
        raise CheckpointError(f"checkpoint {path} cannot be loaded: {err}") from None
    model.eval()
    return model, card
