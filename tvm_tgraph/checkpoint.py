"""Checkpoints: safetensors weights with the model card inside, written atomically.

One ``model.safetensors`` file holds the state dict (no pickle anywhere) and, in its
header's metadata, the model card: format, package version, feature schema, network config,
the number of members of a seed ensemble (:class:`~tvm_tgraph.nn.TGraphEnsemble`, absent for
one network), the SHA-256 of the tensor data, and whatever the trainer adds (training data,
metrics, seeds). Since weights and card are one file replaced in one step, a kill at any instant
leaves the old checkpoint or the new one, whole. A copy of the card is written beside it
as ``model.json`` for people to read; loading ignores it. Loading checks everything and
raises :class:`~tvm_tgraph.errors.CheckpointError` naming the problem.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from . import __version__
from .errors import CheckpointError
from .files import atomic_write_bytes
from .nn import TGraphConfig, TGraphEnsemble, TGraphNet

FORMAT = "tvm-tgraph-checkpoint-2"
#: The safetensors metadata key that holds the model card (JSON).
CARD_KEY = "tvm_tgraph_card"


def card_path(weights_path: str | os.PathLike) -> Path:
    """The readable copy of a checkpoint's card (same name, ``.json``)."""
    return Path(weights_path).with_suffix(".json")


def save_checkpoint(path: str | os.PathLike, model: TGraphNet | TGraphEnsemble, feature_schema: str,
                    **card_fields) -> dict:
    """Save ``model`` (one network or a seed ensemble) and its card to ``path`` (one
    safetensors file, replaced atomically), and a readable copy of the card to ``path`` with
    ``.json``.

    Returns
    -------
    dict
        The model card written.
    """
    from safetensors.torch import save

    tensors = {k: v.detach().contiguous() for k, v in model.state_dict().items()}
    card = {
        "format": FORMAT,
        "tvm_tgraph_version": __version__,
        "feature_schema": feature_schema,
        "model_config": model.config.to_dict(),
        **({"members": len(model.members)} if isinstance(model, TGraphEnsemble) else {}),
        "weights_sha256": hashlib.sha256(_tensor_data(save(tensors))).hexdigest(),
        **card_fields,
    }
    atomic_write_bytes(path, save(tensors, metadata={CARD_KEY: json.dumps(card, sort_keys=True)}))
    atomic_write_bytes(card_path(path), json.dumps(card, indent=2, sort_keys=True).encode())
    return card


def _header(data: bytes) -> dict:
    """The JSON header of a safetensors file (8-byte little-endian length, then JSON)."""
    if len(data) < 8:
        raise ValueError("shorter than a safetensors header")
    length = int.from_bytes(data[:8], "little")
    if length > len(data) - 8:
        raise ValueError("header longer than the file (truncated?)")
    return json.loads(data[8:8 + length])


def _tensor_data(data: bytes) -> bytes:
    """The tensor bytes of a safetensors file (everything after the header)."""
    return data[8 + int.from_bytes(data[:8], "little"):]


def load_checkpoint(path: str | os.PathLike,
                    feature_schema: str | None = None) -> tuple[TGraphNet | TGraphEnsemble, dict]:
    """Load a checkpoint written by :func:`save_checkpoint`.

    Parameters
    ----------
    path : path-like
        The ``.safetensors`` file.
    feature_schema : str, optional
        Refuse a checkpoint trained on another feature schema.

    Returns
    -------
    (TGraphNet or TGraphEnsemble, dict)
        The network (an ensemble where the card counts members) in eval mode and its card.

    Raises
    ------
    CheckpointError
        Missing, truncated or corrupt file, no card inside, weights that do not match the
        card, another feature schema, or a state dict that does not fit the network.
    """
    from safetensors.torch import load

    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"checkpoint file {path} does not exist")
    data = path.read_bytes()
    try:
        card = json.loads(_header(data).get("__metadata__", {})[CARD_KEY])
    except KeyError:
        raise CheckpointError(f"{path} holds no tvm-tgraph model card (not written by tvm-tgraph "
                              f"{__version__}'s save_checkpoint)") from None
    except (ValueError, UnicodeDecodeError, AttributeError, TypeError) as err:
        raise CheckpointError(f"{path} is not a readable safetensors checkpoint: {err}") from None
    if not isinstance(card, dict) or card.get("format") != FORMAT:
        raise CheckpointError(f"{path} holds no tvm-tgraph model card of format {FORMAT!r}")
    if feature_schema is not None and card.get("feature_schema") != feature_schema:
        raise CheckpointError(
            f"checkpoint {path} was trained on feature schema {card.get('feature_schema')!r}; "
            f"this version of tvm-tgraph produces {feature_schema!r}: retrain it with `tgraph train`"
        )
    if hashlib.sha256(_tensor_data(data)).hexdigest() != card.get("weights_sha256"):
        raise CheckpointError(f"weights in {path} do not match their model card (corrupt)")
    try:
        state = load(data)
        config = TGraphConfig(**card["model_config"])
        model = TGraphEnsemble(config, int(card["members"])) if "members" in card else TGraphNet(config)
        model.load_state_dict(state, strict=True)
    except Exception as err:  # safetensors and torch raise several types for bad files
        raise CheckpointError(f"checkpoint {path} cannot be loaded: {err}") from None
    model.eval()
    return model, card
