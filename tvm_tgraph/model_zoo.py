"""Whole models in PyTorch, imported into Relax through ``torch.export``.

Small but real architectures (our own definitions, random weights: nothing is downloaded)
that give the collector and the whole-model tuner realistic fused tasks: plain, residual,
bottleneck, grouped, depthwise-separable, squeeze-excitation, dense and U-shaped CNNs, a
1-d convolutional audio encoder, vision and language transformers (post- and pre-norm,
causal, RMSNorm with a gated SiLU MLP) and an MLP-Mixer. Every builder takes its sizes as
keyword arguments and returns ``(torch module, example input)``, so that a family can be
held out at other sizes. :data:`MODELS` names them; :data:`SUITE_SIZES` lists the sizes the
collector's suite extracts tasks from.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache


@cache
def _layers():
    """The torch building blocks (defined on first use: importing this module needs no torch)."""
    import torch
    from torch import nn
    from torch.nn import functional as F

    def conv_bn(cin, cout, kernel=3, stride=1, groups=1, act=nn.ReLU):
        layers = [nn.Conv2d(cin, cout, kernel, stride, kernel // 2, groups=groups, bias=False), nn.BatchNorm2d(cout)]
        return nn.Sequential(*layers, act()) if act else nn.Sequential(*layers)

    class ResidualBlock(nn.Module):
        def __init__(self, channels, stride=1):
            super().__init__()
            out = channels * stride
            self.body = nn.Sequential(conv_bn(channels, out, 3, stride), conv_bn(out, out, 3, act=None))
            self.skip = nn.Identity() if stride == 1 else conv_bn(channels, out, 1, stride, act=None)

        def forward(self, x):
            return torch.relu(self.body(x) + self.skip(x))

    class ResNet(nn.Module):
        """Stem, residual stages (each next one doubles the width and halves the
        resolution), global pooling and a classifier."""

        def __init__(self, width=16, classes=10, stages=2):
            super().__init__()
            self.stem = conv_bn(3, width)
            blocks = [ResidualBlock(width)] + [ResidualBlock(width * 2 ** i, 2) for i in range(stages - 1)]
            self.stages = nn.Sequential(*blocks)
            self.head = nn.Linear(width * 2 ** (stages - 1), classes)

        def forward(self, x):
            return self.head(self.stages(self.stem(x)).mean(dim=(2, 3)))

    class Bottleneck(nn.Module):
        """1x1 reduce, 3x3 (grouped for ResNeXt), 1x1 expand, as in ResNet-50 / ResNeXt."""

        def __init__(self, cin, mid, cout, stride=1, groups=1):
            super().__init__()
            self.body = nn.Sequential(conv_bn(cin, mid, 1), conv_bn(mid, mid, 3, stride, groups),
                                      conv_bn(mid, cout, 1, act=None))
            self.skip = nn.Identity() if stride == 1 and cin == cout else conv_bn(cin, cout, 1, stride, act=None)

        def forward(self, x):
            return torch.relu(self.body(x) + self.skip(x))

    class BottleneckNet(nn.Module):
        def __init__(self, width=16, groups=1, classes=10):
            super().__init__()
            mid = width * 2 if groups > 1 else width
            self.stem = nn.Sequential(conv_bn(3, width, 3, 2), nn.MaxPool2d(3, 2, 1))
            self.blocks = nn.Sequential(Bottleneck(width, mid, width * 4, 1, groups),
                                        Bottleneck(width * 4, mid * 2, width * 8, 2, groups))
            self.head = nn.Linear(width * 8, classes)

        def forward(self, x):
            return self.head(self.blocks(self.stem(x)).mean(dim=(2, 3)))

    class VGG(nn.Module):
        """Plain 3x3 convolutions with biases, max pooling, a two-layer classifier."""

        def __init__(self, width=16, image=32, classes=10):
            super().__init__()
            self.features = nn.Sequential(
                nn.Conv2d(3, width, 3, 1, 1), nn.ReLU(), nn.MaxPool2d(2),
                nn.Conv2d(width, width * 2, 3, 1, 1), nn.ReLU(), nn.Conv2d(width * 2, width * 2, 3, 1, 1), nn.ReLU(),
                nn.MaxPool2d(2))
            self.classifier = nn.Sequential(nn.Flatten(), nn.Linear(width * 2 * (image // 4) ** 2, 64), nn.ReLU(),
                                            nn.Linear(64, classes))

        def forward(self, x):
            return self.classifier(self.features(x))

    class AlexNetStyle(nn.Module):
        """Large strided first kernel, overlapping max pooling, average pooling, dropout-free head."""

        def __init__(self, width=16, classes=10):
            super().__init__()
            self.features = nn.Sequential(
                nn.Conv2d(3, width, 5, 2, 2), nn.ReLU(), nn.MaxPool2d(3, 2),
                nn.Conv2d(width, width * 3, 3, 1, 1), nn.ReLU(), nn.AvgPool2d(2))
            self.head = nn.Linear(width * 3, classes)

        def forward(self, x):
            return self.head(self.features(x).mean(dim=(2, 3)))

    class SqueezeExcite(nn.Module):
        def __init__(self, channels, reduced, gate=nn.Sigmoid, act=nn.ReLU):
            super().__init__()
            self.fc = nn.Sequential(nn.Conv2d(channels, reduced, 1), act(), nn.Conv2d(reduced, channels, 1), gate())

        def forward(self, x):
            return x * self.fc(x.mean(dim=(2, 3), keepdim=True))

    class InvertedResidual(nn.Module):
        """MobileNetV2 / V3 / EfficientNet block: 1x1 expand, depthwise, optional SE, 1x1 project."""

        def __init__(self, cin, cout, expand=4, stride=1, kernel=3, act=nn.ReLU6, se=None):
            super().__init__()
            hidden = cin * expand
            layers = [conv_bn(cin, hidden, 1, act=act), conv_bn(hidden, hidden, kernel, stride, hidden, act=act)]
            if se is not None:
                layers.append(se(hidden))
            layers.append(conv_bn(hidden, cout, 1, act=None))
            self.body = nn.Sequential(*layers)
            self.use_skip = stride == 1 and cin == cout

        def forward(self, x):
            return x + self.body(x) if self.use_skip else self.body(x)

    class MobileNetV2Blocks(nn.Module):
        """A stem and depthwise-separable inverted-residual blocks, as in MobileNetV2."""

        def __init__(self, width=16):
            super().__init__()
            self.stem = conv_bn(3, width, 3, 2, act=nn.ReLU6)
            self.blocks = nn.Sequential(InvertedResidual(width, width), InvertedResidual(width, width, stride=2))

        def forward(self, x):
            return self.blocks(self.stem(x)).mean(dim=(2, 3))

    class MobileNetV3Blocks(nn.Module):
        """Hard-swish activations, 5x5 depthwise kernels and hard-sigmoid squeeze-excitation."""

        def __init__(self, width=16, classes=10):
            super().__init__()
            se = lambda c: SqueezeExcite(c, max(8, c // 4), gate=nn.Hardsigmoid)  # noqa: E731
            self.stem = conv_bn(3, width, 3, 2, act=nn.Hardswish)
            self.blocks = nn.Sequential(
                InvertedResidual(width, width, 3, 1, 3, nn.ReLU),
                InvertedResidual(width, width * 2, 4, 2, 5, nn.Hardswish, se),
                InvertedResidual(width * 2, width * 2, 3, 1, 5, nn.Hardswish, se))
            self.head = nn.Sequential(nn.Linear(width * 2, 64), nn.Hardswish(), nn.Linear(64, classes))

        def forward(self, x):
            return self.head(self.blocks(self.stem(x)).mean(dim=(2, 3)))

    class EfficientNetBlocks(nn.Module):
        """MBConv blocks with SiLU and SiLU-gated squeeze-excitation, as in EfficientNet-B0."""

        def __init__(self, width=16, classes=10):
            super().__init__()
            se = lambda c: SqueezeExcite(c, max(4, c // 24), act=nn.SiLU)  # noqa: E731
            self.stem = conv_bn(3, width, 3, 2, act=nn.SiLU)
            self.blocks = nn.Sequential(
                InvertedResidual(width, width, 1, 1, 3, nn.SiLU, se),
                InvertedResidual(width, width + 8, 6, 2, 3, nn.SiLU, se),
                InvertedResidual(width + 8, width + 8, 6, 1, 5, nn.SiLU, se))
            self.head = nn.Sequential(conv_bn(width + 8, width * 4, 1, act=nn.SiLU))
            self.fc = nn.Linear(width * 4, classes)

        def forward(self, x):
            return self.fc(self.head(self.blocks(self.stem(x))).mean(dim=(2, 3)))

    class ShuffleUnit(nn.Module):
        """ShuffleNetV2 unit: channel split, 1x1 / depthwise / 1x1 branch, concat, shuffle."""

        def __init__(self, channels):
            super().__init__()
            half = channels // 2
            self.branch = nn.Sequential(conv_bn(half, half, 1), conv_bn(half, half, 3, 1, half, act=None),
                                        conv_bn(half, half, 1))

        def forward(self, x):
            a, b = x.chunk(2, dim=1)
            out = torch.cat([a, self.branch(b)], dim=1)
            n, c, h, w = out.shape
            return out.reshape(n, 2, c // 2, h, w).transpose(1, 2).reshape(n, c, h, w)

    class ShuffleNetV2Blocks(nn.Module):
        def __init__(self, width=24, classes=10):
            super().__init__()
            self.stem = nn.Sequential(conv_bn(3, width, 3, 2), nn.MaxPool2d(3, 2, 1))
            self.units = nn.Sequential(ShuffleUnit(width), ShuffleUnit(width))
            self.fc = nn.Linear(width, classes)

        def forward(self, x):
            return self.fc(self.units(self.stem(x)).mean(dim=(2, 3)))

    class DenseBlock(nn.Module):
        """DenseNet: each layer (BN-ReLU-1x1-BN-ReLU-3x3) sees the concat of all before it."""

        def __init__(self, cin, growth, layers):
            super().__init__()
            self.layers = nn.ModuleList(
                nn.Sequential(nn.BatchNorm2d(cin + i * growth), nn.ReLU(),
                              nn.Conv2d(cin + i * growth, 4 * growth, 1, bias=False),
                              nn.BatchNorm2d(4 * growth), nn.ReLU(), nn.Conv2d(4 * growth, growth, 3, 1, 1, bias=False))
                for i in range(layers))

        def forward(self, x):
            for layer in self.layers:
                x = torch.cat([x, layer(x)], dim=1)
            return x

    class DenseNet(nn.Module):
        def __init__(self, width=16, growth=8, classes=10):
            super().__init__()
            self.stem = nn.Conv2d(3, width, 3, 1, 1, bias=False)
            self.block = DenseBlock(width, growth, 3)
            out = width + 3 * growth
            self.transition = nn.Sequential(nn.BatchNorm2d(out), nn.ReLU(), nn.Conv2d(out, out // 2, 1, bias=False),
                                            nn.AvgPool2d(2))
            self.fc = nn.Linear(out // 2, classes)

        def forward(self, x):
            return self.fc(self.transition(self.block(self.stem(x))).mean(dim=(2, 3)))

    class Fire(nn.Module):
        def __init__(self, cin, squeeze, expand):
            super().__init__()
            self.squeeze = nn.Sequential(nn.Conv2d(cin, squeeze, 1), nn.ReLU())
            self.e1 = nn.Sequential(nn.Conv2d(squeeze, expand, 1), nn.ReLU())
            self.e3 = nn.Sequential(nn.Conv2d(squeeze, expand, 3, 1, 1), nn.ReLU())

        def forward(self, x):
            s = self.squeeze(x)
            return torch.cat([self.e1(s), self.e3(s)], dim=1)

    class SqueezeNet(nn.Module):
        def __init__(self, width=16, classes=10):
            super().__init__()
            self.features = nn.Sequential(nn.Conv2d(3, width * 4, 3, 2), nn.ReLU(), nn.MaxPool2d(3, 2, ceil_mode=True),
                                          Fire(width * 4, width, width * 4), Fire(width * 8, width, width * 4))
            self.classifier = nn.Sequential(nn.Conv2d(width * 8, classes, 1), nn.ReLU())

        def forward(self, x):
            return self.classifier(self.features(x)).mean(dim=(2, 3))

    class ConvNeXtBlock(nn.Module):
        """7x7 depthwise, channels-last LayerNorm, GELU MLP, layer scale."""

        def __init__(self, channels):
            super().__init__()
            self.dw = nn.Conv2d(channels, channels, 7, 1, 3, groups=channels)
            self.norm = nn.LayerNorm(channels)
            self.mlp = nn.Sequential(nn.Linear(channels, 4 * channels), nn.GELU(), nn.Linear(4 * channels, channels))
            self.scale = nn.Parameter(torch.full((channels,), 0.1))

        def forward(self, x):
            y = self.dw(x).permute(0, 2, 3, 1)
            y = self.mlp(self.norm(y)) * self.scale
            return x + y.permute(0, 3, 1, 2)

    class ConvNeXt(nn.Module):
        def __init__(self, width=24, classes=10):
            super().__init__()
            self.stem = nn.Conv2d(3, width, 4, 4)
            self.blocks = nn.Sequential(ConvNeXtBlock(width), ConvNeXtBlock(width))
            self.norm = nn.LayerNorm(width)
            self.fc = nn.Linear(width, classes)

        def forward(self, x):
            return self.fc(self.norm(self.blocks(self.stem(x)).mean(dim=(2, 3))))

    class UNetSmall(nn.Module):
        """Two-level encoder-decoder: max-pool down, nearest upsample, skip concat."""

        def __init__(self, width=16):
            super().__init__()
            self.enc1 = nn.Sequential(conv_bn(3, width), conv_bn(width, width))
            self.enc2 = nn.Sequential(conv_bn(width, width * 2), conv_bn(width * 2, width * 2))
            self.up = nn.Upsample(scale_factor=2, mode="nearest")
            self.dec = nn.Sequential(conv_bn(width * 3, width), nn.Conv2d(width, 2, 1))

        def forward(self, x):
            e1 = self.enc1(x)
            e2 = self.enc2(F.max_pool2d(e1, 2))
            return self.dec(torch.cat([e1, self.up(e2)], dim=1))

    class AudioConvEncoder(nn.Module):
        """wav2vec-style 1-d strided convolutions with GroupNorm and GELU."""

        def __init__(self, width=32):
            super().__init__()
            self.layers = nn.Sequential(
                nn.Conv1d(1, width, 10, 5, bias=False), nn.GroupNorm(width, width), nn.GELU(),
                nn.Conv1d(width, width, 3, 2, bias=False), nn.GELU(),
                nn.Conv1d(width, width, 3, 2, bias=False), nn.GELU())
            self.proj = nn.Linear(width, width * 2)

        def forward(self, x):
            return self.proj(self.layers(x).transpose(1, 2))

    class Attention(nn.Module):
        def __init__(self, hidden, heads, causal=False):
            super().__init__()
            self.heads, self.causal = heads, causal
            self.qkv = nn.Linear(hidden, 3 * hidden)
            self.proj = nn.Linear(hidden, hidden)

        def forward(self, x):
            batch, seq, hidden = x.shape
            head = hidden // self.heads
            q, k, v = self.qkv(x).reshape(batch, seq, 3, self.heads, head).permute(2, 0, 3, 1, 4)
            scores = q @ k.transpose(-1, -2) / head ** 0.5
            if self.causal:
                mask = torch.triu(torch.ones(seq, seq, dtype=torch.bool), diagonal=1)
                scores = scores.masked_fill(mask, float("-inf"))
            context = (torch.softmax(scores, dim=-1) @ v).transpose(1, 2).reshape(batch, seq, hidden)
            return self.proj(context)

    class TransformerLayer(nn.Module):
        """A BERT-style encoder layer: self-attention and a GELU MLP, post-LayerNorm."""

        def __init__(self, hidden=128, heads=4):
            super().__init__()
            self.attention = Attention(hidden, heads)
            self.norm1 = nn.LayerNorm(hidden)
            self.mlp = nn.Sequential(nn.Linear(hidden, 4 * hidden), nn.GELU(), nn.Linear(4 * hidden, hidden))
            self.norm2 = nn.LayerNorm(hidden)

        def forward(self, x):
            x = self.norm1(x + self.attention(x))
            return self.norm2(x + self.mlp(x))

    class PreNormBlock(nn.Module):
        """Pre-LayerNorm transformer block (ViT, GPT-2); GPT-2's GELU is the tanh form."""

        def __init__(self, hidden, heads, causal=False, gelu="none"):
            super().__init__()
            self.norm1, self.norm2 = nn.LayerNorm(hidden), nn.LayerNorm(hidden)
            self.attention = Attention(hidden, heads, causal)
            self.mlp = nn.Sequential(nn.Linear(hidden, 4 * hidden), nn.GELU(approximate=gelu),
                                     nn.Linear(4 * hidden, hidden))

        def forward(self, x):
            x = x + self.attention(self.norm1(x))
            return x + self.mlp(self.norm2(x))

    class ViT(nn.Module):
        """Patch embedding (strided convolution), class token, position embedding, pre-norm blocks."""

        def __init__(self, image=32, patch=4, hidden=96, heads=4, classes=10):
            super().__init__()
            self.embed = nn.Conv2d(3, hidden, patch, patch)
            self.cls = nn.Parameter(torch.zeros(1, 1, hidden))
            self.pos = nn.Parameter(torch.randn(1, (image // patch) ** 2 + 1, hidden) * 0.02)
            self.block = PreNormBlock(hidden, heads)
            self.norm = nn.LayerNorm(hidden)
            self.fc = nn.Linear(hidden, classes)

        def forward(self, x):
            tokens = self.embed(x).flatten(2).transpose(1, 2)
            tokens = torch.cat([self.cls.expand(x.shape[0], -1, -1), tokens], dim=1) + self.pos
            return self.fc(self.norm(self.block(tokens))[:, 0])

    class GPT2Block(nn.Module):
        """Token embedding lookup, a causal pre-norm block, the tied LM head."""

        def __init__(self, vocab=512, hidden=128, heads=4):
            super().__init__()
            self.embed = nn.Embedding(vocab, hidden)
            self.block = PreNormBlock(hidden, heads, causal=True, gelu="tanh")
            self.norm = nn.LayerNorm(hidden)

        def forward(self, ids):
            return self.norm(self.block(self.embed(ids))) @ self.embed.weight.T

    class RMSNorm(nn.Module):
        def __init__(self, hidden):
            super().__init__()
            self.weight = nn.Parameter(torch.ones(hidden))

        def forward(self, x):
            return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * self.weight

    class LlamaBlock(nn.Module):
        """RMSNorm, causal attention without biases, SiLU-gated MLP (SwiGLU)."""

        def __init__(self, hidden=128, heads=4, ffn=344):
            super().__init__()
            self.norm1, self.norm2 = RMSNorm(hidden), RMSNorm(hidden)
            self.attention = Attention(hidden, heads, causal=True)
            self.gate = nn.Linear(hidden, ffn, bias=False)
            self.up = nn.Linear(hidden, ffn, bias=False)
            self.down = nn.Linear(ffn, hidden, bias=False)

        def forward(self, x):
            x = x + self.attention(self.norm1(x))
            y = self.norm2(x)
            return x + self.down(F.silu(self.gate(y)) * self.up(y))

    class MixerBlock(nn.Module):
        """MLP-Mixer: a token-mixing MLP over the transposed sequence, then a channel MLP."""

        def __init__(self, tokens, hidden):
            super().__init__()
            self.norm1, self.norm2 = nn.LayerNorm(hidden), nn.LayerNorm(hidden)
            self.tokens = nn.Sequential(nn.Linear(tokens, tokens * 2), nn.GELU(), nn.Linear(tokens * 2, tokens))
            self.channels = nn.Sequential(nn.Linear(hidden, hidden * 4), nn.GELU(), nn.Linear(hidden * 4, hidden))

        def forward(self, x):
            x = x + self.tokens(self.norm1(x).transpose(1, 2)).transpose(1, 2)
            return x + self.channels(self.norm2(x))

    class MLPMixer(nn.Module):
        def __init__(self, image=32, patch=4, hidden=64, classes=10):
            super().__init__()
            self.embed = nn.Conv2d(3, hidden, patch, patch)
            self.block = MixerBlock((image // patch) ** 2, hidden)
            self.fc = nn.Linear(hidden, classes)

        def forward(self, x):
            return self.fc(self.block(self.embed(x).flatten(2).transpose(1, 2)).mean(dim=1))

    class MLPBlock(nn.Module):
        """A tabular / recommender MLP: Linear-SiLU, Linear-GELU, BatchNorm1d, Linear."""

        def __init__(self, features=256, hidden=512, classes=16):
            super().__init__()
            self.layers = nn.Sequential(nn.Linear(features, hidden), nn.SiLU(), nn.Linear(hidden, hidden // 2),
                                        nn.GELU(), nn.BatchNorm1d(hidden // 2), nn.Linear(hidden // 2, classes))

        def forward(self, x):
            return self.layers(x)

    return dict(ResNet=ResNet, BottleneckNet=BottleneckNet, VGG=VGG, AlexNetStyle=AlexNetStyle,
                MobileNetV2Blocks=MobileNetV2Blocks, MobileNetV3Blocks=MobileNetV3Blocks,
                EfficientNetBlocks=EfficientNetBlocks, ShuffleNetV2Blocks=ShuffleNetV2Blocks, DenseNet=DenseNet,
                SqueezeNet=SqueezeNet, ConvNeXt=ConvNeXt, UNetSmall=UNetSmall, AudioConvEncoder=AudioConvEncoder,
                TransformerLayer=TransformerLayer, ViT=ViT, GPT2Block=GPT2Block, LlamaBlock=LlamaBlock,
                MLPMixer=MLPMixer, MLPBlock=MLPBlock)


def _image(batch, image):
    import torch

    return torch.randn(batch, 3, image, image)


def _sequence(batch, seq, hidden):
    import torch

    return torch.randn(batch, seq, hidden)


def resnet(batch: int = 1, width: int = 16, image: int = 32, stages: int = 2):
    """(torch module, example input) of a small ResNet-style CNN (basic blocks)."""
    return _layers()["ResNet"](width, stages=stages), _image(batch, image)


def resnet_bottleneck(batch: int = 1, width: int = 16, image: int = 32):
    """ResNet-50-style bottleneck blocks (1x1 / 3x3 / 1x1)."""
    return _layers()["BottleneckNet"](width), _image(batch, image)


def resnext(batch: int = 1, width: int = 16, image: int = 32, groups: int = 8):
    """ResNeXt-style bottleneck blocks with grouped 3x3 convolutions."""
    return _layers()["BottleneckNet"](width, groups), _image(batch, image)


def vgg(batch: int = 1, width: int = 16, image: int = 32):
    """VGG-style plain CNN with biases, max pooling and a two-layer classifier."""
    return _layers()["VGG"](width, image), _image(batch, image)


def alexnet(batch: int = 1, width: int = 16, image: int = 64):
    """AlexNet-style CNN: 5x5 strided first kernel, max and average pooling."""
    return _layers()["AlexNetStyle"](width), _image(batch, image)


def mobilenet_v2(batch: int = 1, width: int = 16, image: int = 32):
    """(torch module, example input) of MobileNetV2-style depthwise-separable blocks."""
    return _layers()["MobileNetV2Blocks"](width), _image(batch, image)


def mobilenet_v3(batch: int = 1, width: int = 16, image: int = 32):
    """MobileNetV3-style blocks: hard-swish, 5x5 depthwise, hard-sigmoid squeeze-excitation."""
    return _layers()["MobileNetV3Blocks"](width), _image(batch, image)


def efficientnet(batch: int = 1, width: int = 16, image: int = 32):
    """EfficientNet-style MBConv blocks with SiLU and squeeze-excitation."""
    return _layers()["EfficientNetBlocks"](width), _image(batch, image)


def shufflenet_v2(batch: int = 1, width: int = 24, image: int = 32):
    """ShuffleNetV2 units: channel split, depthwise branch, channel shuffle."""
    return _layers()["ShuffleNetV2Blocks"](width), _image(batch, image)


def densenet(batch: int = 1, width: int = 16, image: int = 32, growth: int = 8):
    """A DenseNet block (concatenating BN-ReLU-conv layers) and a transition."""
    return _layers()["DenseNet"](width, growth), _image(batch, image)


def squeezenet(batch: int = 1, width: int = 16, image: int = 48):
    """SqueezeNet fire modules (1x1 squeeze, concatenated 1x1 / 3x3 expand)."""
    return _layers()["SqueezeNet"](width), _image(batch, image)


def convnext(batch: int = 1, width: int = 24, image: int = 32):
    """ConvNeXt blocks: patchify stem, 7x7 depthwise, LayerNorm, GELU MLP."""
    return _layers()["ConvNeXt"](width), _image(batch, image)


def unet(batch: int = 1, width: int = 16, image: int = 32):
    """A two-level U-Net: max-pool down, nearest upsample, skip concatenation."""
    return _layers()["UNetSmall"](width), _image(batch, image)


def audio_conv(batch: int = 1, width: int = 32, samples: int = 1600):
    """A wav2vec-style 1-d convolutional audio encoder with GroupNorm and GELU."""
    import torch

    return _layers()["AudioConvEncoder"](width), torch.randn(batch, 1, samples)


def transformer(batch: int = 1, seq: int = 64, hidden: int = 128, heads: int = 4):
    """(torch module, example input) of a BERT-style encoder layer (post-LayerNorm)."""
    return _layers()["TransformerLayer"](hidden, heads), _sequence(batch, seq, hidden)


def vit(batch: int = 1, image: int = 32, patch: int = 4, hidden: int = 96, heads: int = 4):
    """A vision transformer: patch embedding, class token, one pre-norm block."""
    return _layers()["ViT"](image, patch, hidden, heads), _image(batch, image)


def gpt2(batch: int = 1, seq: int = 64, hidden: int = 128, heads: int = 4, vocab: int = 512):
    """A GPT-2 decoder block: embedding, causal pre-norm attention, tanh GELU, tied LM head."""
    import torch

    return _layers()["GPT2Block"](vocab, hidden, heads), torch.randint(0, vocab, (batch, seq))


def llama(batch: int = 1, seq: int = 64, hidden: int = 128, heads: int = 4, ffn: int = 344):
    """A LLaMA-style decoder block: RMSNorm, causal attention, SwiGLU MLP."""
    return _layers()["LlamaBlock"](hidden, heads, ffn), _sequence(batch, seq, hidden)


def mlp_mixer(batch: int = 1, image: int = 32, patch: int = 4, hidden: int = 64):
    """An MLP-Mixer block: token-mixing and channel-mixing GELU MLPs."""
    return _layers()["MLPMixer"](image, patch, hidden), _image(batch, image)


def mlp(batch: int = 32, features: int = 256, hidden: int = 512):
    """A tabular MLP with SiLU, GELU and BatchNorm1d."""
    import torch

    return _layers()["MLPBlock"](features, hidden), torch.randn(batch, features)


#: Model builders by family name (the unit that evaluation holds out).
MODELS: dict[str, Callable] = {
    "resnet": resnet, "resnet_bottleneck": resnet_bottleneck, "resnext": resnext, "vgg": vgg,
    "alexnet": alexnet, "mobilenet_v2": mobilenet_v2, "mobilenet_v3": mobilenet_v3,
    "efficientnet": efficientnet, "shufflenet_v2": shufflenet_v2, "densenet": densenet,
    "squeezenet": squeezenet, "convnext": convnext, "unet": unet, "audio_conv": audio_conv,
    "transformer": transformer, "vit": vit, "gpt2": gpt2, "llama": llama, "mlp_mixer": mlp_mixer, "mlp": mlp,
}

#: The sizes at which the collector's suite extracts each family's tasks (the first entry of
#: resnet, mobilenet_v2 and transformer is the original suite's; the whole-model workloads
#: of :mod:`tvm_tgraph.workloads` use other sizes).
SUITE_SIZES: dict[str, list[dict]] = {
    "resnet": [{}, dict(batch=4, width=24, image=32), dict(width=32, image=56, stages=3)],
    "resnet_bottleneck": [{}, dict(width=24, image=64), dict(batch=4, width=16, image=32)],
    "resnext": [{}, dict(width=32, image=48, groups=16)],
    "vgg": [{}, dict(batch=4, width=24, image=32), dict(width=32, image=64)],
    "alexnet": [{}, dict(batch=4, width=24, image=96)],
    "mobilenet_v2": [{}, dict(batch=4, width=24, image=48), dict(width=32, image=64)],
    "mobilenet_v3": [{}, dict(width=24, image=64), dict(batch=4, width=16, image=48)],
    "efficientnet": [{}, dict(width=24, image=64), dict(batch=4, width=16, image=32)],
    "shufflenet_v2": [{}, dict(width=48, image=64), dict(batch=4, width=32, image=32)],
    "densenet": [{}, dict(width=24, image=48, growth=12)],
    "squeezenet": [{}, dict(batch=4, width=16, image=64)],
    "convnext": [{}, dict(width=48, image=64), dict(batch=4, width=32, image=32)],
    "unet": [{}, dict(width=24, image=64)],
    "audio_conv": [{}, dict(width=64, samples=4000), dict(batch=4, width=32, samples=1600)],
    "transformer": [{}, dict(seq=128, hidden=256, heads=8), dict(batch=4, seq=32, hidden=128)],
    "vit": [{}, dict(image=64, patch=8, hidden=128), dict(batch=4, image=32, patch=4, hidden=64, heads=2)],
    "gpt2": [{}, dict(seq=128, hidden=192, heads=6), dict(batch=4, seq=32, hidden=128, vocab=1024)],
    "llama": [{}, dict(seq=128, hidden=256, heads=8, ffn=688), dict(batch=4, seq=32, hidden=128)],
    "mlp_mixer": [{}, dict(image=64, patch=8, hidden=96), dict(batch=4, image=32, patch=4, hidden=48)],
    "mlp": [{}, dict(batch=128, features=512, hidden=1024), dict(batch=8, features=128, hidden=256)],
}


def to_relax(model, example):
    """Import a torch module into a Relax ``IRModule`` (weights kept as constants)."""
    import torch
    from tvm.relax.frontend.torch import from_exported_program

    torch.manual_seed(0)
    with torch.no_grad():
        return from_exported_program(torch.export.export(model.eval(), (example,)))


def relax_model(family: str, **sizes):
    """The Relax ``IRModule`` of the :data:`MODELS` ``family`` at ``sizes``, with the same
    (random) weights on every call."""
    import torch

    torch.manual_seed(0)   # before the model is built: its initialisation draws the weights
    return to_relax(*MODELS[family](**sizes))


def extract_tir_tasks(relax_mod, target) -> list[tuple[str, object, int]]:
    """The TIR tasks MetaSchedule tunes for a Relax model.

    Returns
    -------
    list of (task name, IRModule, weight)
    """
    from tvm import relax
    from tvm.s_tir import meta_schedule as ms

    with target:
        lowered = relax.get_pipeline("zero")(relax_mod)
    tasks = ms.relax_integration.extract_tasks(lowered, target)
    return [(task.task_name, task.dispatched[0], int(task.weight)) for task in tasks]
