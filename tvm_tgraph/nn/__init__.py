"""The TGraph network (PyTorch + PyTorch Geometric); imports no TVM."""

from .block import CROSS_ATTENTION_KINDS, TGraphBlock
from .channel_attention import ChannelAttention
from .cross_attention import ConfigCrossAttention, ConfigSoftmaxAttention
from .ensemble import TGraphEnsemble, predict_member_scores
from .model import GraphTensors, TGraphConfig, TGraphNet, predict_scores

__all__ = [
    "ChannelAttention",
    "CROSS_ATTENTION_KINDS",
    "ConfigCrossAttention",
    "ConfigSoftmaxAttention",
    "GraphTensors",
    "TGraphBlock",
    "TGraphConfig",
    "TGraphEnsemble",
    "TGraphNet",
    "predict_member_scores",
    "predict_scores",
]
