"""The TGraph network (PyTorch + PyTorch Geometric); imports no TVM."""

from .block import TGraphBlock
from .channel_attention import ChannelAttention
from .cross_attention import ConfigCrossAttention
from .model import GraphTensors, TGraphConfig, TGraphNet, predict_scores

__all__ = [
    "ChannelAttention",
    "ConfigCrossAttention",
    "GraphTensors",
    "TGraphBlock",
    "TGraphConfig",
    "TGraphNet",
    "predict_scores",
]
