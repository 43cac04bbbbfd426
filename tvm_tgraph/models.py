"""Small whole models in PyTorch, imported into Relax through ``torch.export``.

They give the collector and the whole-model tuner realistic fused tasks: a ResNet-style
CNN, MobileNetV2-style depthwise-separable blocks and a BERT-style transformer encoder
layer. Weights are random (nothing is downloaded); sizes are parameters so that the same
families can be held out at other sizes.
"""

from __future__ import annotations

from collections.abc import Callable


def _torch_models():
    import torch
    from torch import nn

    class ResidualBlock(nn.Module):
        def __init__(self, channels: int, stride: int = 1) -> None:
            super().__init__()
            out = channels * stride
            self.body = nn.Sequential(
                nn.Conv2d(channels, out, 3, stride, 1, bias=False), nn.BatchNorm2d(out), nn.ReLU(),
                nn.Conv2d(out, out, 3, 1, 1, bias=False), nn.BatchNorm2d(out),
            )
            self.skip = nn.Identity() if stride == 1 else nn.Sequential(
                nn.Conv2d(channels, out, 1, stride, bias=False), nn.BatchNorm2d(out))

        def forward(self, x):
            return torch.relu(self.body(x) + self.skip(x))

    class ResNet(nn.Module):
        """Stem, residual stages (the first keeps the width, each next one doubles it and
        halves the resolution), global pooling and a classifier."""

        def __init__(self, width: int = 16, classes: int = 10, stages: int = 2) -> None:
            super().__init__()
            self.stem = nn.Sequential(nn.Conv2d(3, width, 3, 1, 1, bias=False), nn.BatchNorm2d(width), nn.ReLU())
            blocks = [ResidualBlock(width)] + [ResidualBlock(width * 2 ** i, 2) for i in range(stages - 1)]
            self.stages = nn.Sequential(*blocks)
            self.head = nn.Linear(width * 2 ** (stages - 1), classes)

        def forward(self, x):
            return self.head(self.stages(self.stem(x)).mean(dim=(2, 3)))

    class InvertedResidual(nn.Module):
        def __init__(self, channels: int, expand: int = 4, stride: int = 1) -> None:
            super().__init__()
            hidden = channels * expand
            self.use_skip = stride == 1
            self.body = nn.Sequential(
                nn.Conv2d(channels, hidden, 1, bias=False), nn.BatchNorm2d(hidden), nn.ReLU6(),
                nn.Conv2d(hidden, hidden, 3, stride, 1, groups=hidden, bias=False), nn.BatchNorm2d(hidden), nn.ReLU6(),
                nn.Conv2d(hidden, channels, 1, bias=False), nn.BatchNorm2d(channels),
            )

        def forward(self, x):
            return x + self.body(x) if self.use_skip else self.body(x)

    class MobileNetV2Blocks(nn.Module):
        """A stem and depthwise-separable inverted-residual blocks, as in MobileNetV2."""

        def __init__(self, width: int = 16) -> None:
            super().__init__()
            self.stem = nn.Sequential(nn.Conv2d(3, width, 3, 2, 1, bias=False), nn.BatchNorm2d(width), nn.ReLU6())
            self.blocks = nn.Sequential(InvertedResidual(width), InvertedResidual(width, stride=2))

        def forward(self, x):
            return self.blocks(self.stem(x)).mean(dim=(2, 3))

    class TransformerLayer(nn.Module):
        """A BERT-style encoder layer: self-attention and a GELU MLP, post-LayerNorm."""

        def __init__(self, hidden: int = 128, heads: int = 4) -> None:
            super().__init__()
            self.heads = heads
            self.qkv = nn.Linear(hidden, 3 * hidden)
            self.proj = nn.Linear(hidden, hidden)
            self.norm1 = nn.LayerNorm(hidden)
            self.mlp = nn.Sequential(nn.Linear(hidden, 4 * hidden), nn.GELU(), nn.Linear(4 * hidden, hidden))
            self.norm2 = nn.LayerNorm(hidden)

        def forward(self, x):
            batch, seq, hidden = x.shape
            q, k, v = self.qkv(x).reshape(batch, seq, 3, self.heads, hidden // self.heads).permute(2, 0, 3, 1, 4)
            attention = torch.softmax(q @ k.transpose(-1, -2) / (hidden // self.heads) ** 0.5, dim=-1)
            context = (attention @ v).transpose(1, 2).reshape(batch, seq, hidden)
            x = self.norm1(x + self.proj(context))
            return self.norm2(x + self.mlp(x))

    return ResNet, MobileNetV2Blocks, TransformerLayer


def resnet(batch: int = 1, width: int = 16, image: int = 32, stages: int = 2):
    """(torch module, example input) of a small ResNet-style CNN."""
    import torch

    model_cls, _, _ = _torch_models()
    return model_cls(width, stages=stages), torch.randn(batch, 3, image, image)


def mobilenet_v2(batch: int = 1, width: int = 16, image: int = 32):
    """(torch module, example input) of MobileNetV2-style depthwise-separable blocks."""
    import torch

    _, model_cls, _ = _torch_models()
    return model_cls(width), torch.randn(batch, 3, image, image)


def transformer(batch: int = 1, seq: int = 64, hidden: int = 128, heads: int = 4):
    """(torch module, example input) of a BERT-style encoder layer."""
    import torch

    _, _, model_cls = _torch_models()
    return model_cls(hidden, heads), torch.randn(batch, seq, hidden)


#: Model builders by family name.
MODELS: dict[str, Callable] = {"resnet": resnet, "mobilenet_v2": mobilenet_v2, "transformer": transformer}


def to_relax(model, example):
    """Import a torch module into a Relax ``IRModule`` (weights kept as constants)."""
    import torch
    from tvm.relax.frontend.torch import from_exported_program

    torch.manual_seed(0)
    with torch.no_grad():
        return from_exported_program(torch.export.export(model.eval(), (example,)))


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
