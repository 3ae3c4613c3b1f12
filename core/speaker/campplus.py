"""CAM++, 3D-Speaker's speaker embedding network, for inference with the official checkpoints'
module names, and its export to ONNX for sherpa-onnx. From github.com/modelscope/3D-Speaker
(Copyright 3D-Speaker, Apache License 2.0). See docs/voice-check.md.
"""

from collections import OrderedDict
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

# sherpa-onnx's key -> value for a 3D-Speaker model (its scripts/3dspeaker/export-onnx.py).
SHERPA_METADATA = {
    "framework": "3d-speaker",
    "language": "Chinese-English",
    "url": "https://www.modelscope.cn/models/iic/speech_campplus_sv_zh_en_16k-common_advanced",
    "sample_rate": 16000,
    "output_dim": 192,
    "normalize_samples": 1,  # samples in [-1, 1]
    "feature_normalize_type": "global-mean",
}
FEATURES = 80
EMBEDDING = 192
DENSE_KERNEL = 3  # every dense TDNN layer's kernel (its dilation varies by block)


def _batchnorm_relu(channels: int) -> nn.Sequential:
    """3D-Speaker's `batchnorm-relu` nonlinearity (its names are the checkpoints' keys)."""
    return nn.Sequential(
        OrderedDict([("batchnorm", nn.BatchNorm1d(channels)), ("relu", nn.ReLU(inplace=True))])
    )


class BasicResBlock(nn.Module):
    def __init__(self, in_planes: int, planes: int, stride: int = 1) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(
            in_planes, planes, kernel_size=3, stride=(stride, 1), padding=1, bias=False
        )
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, kernel_size=3, stride=1, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.shortcut = nn.Sequential()
        if stride != 1 or in_planes != planes:
            self.shortcut = nn.Sequential(
                nn.Conv2d(in_planes, planes, kernel_size=1, stride=(stride, 1), bias=False),
                nn.BatchNorm2d(planes),
            )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out)) + self.shortcut(x)
        return F.relu(out)


class FCM(nn.Module):
    """The front: 2-D convolutions over (frequency, time), then frequency folded into channels."""

    def __init__(self, m_channels: int = 32, feat_dim: int = FEATURES) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(1, m_channels, kernel_size=3, stride=1, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(m_channels)
        self.layer1 = nn.Sequential(
            BasicResBlock(m_channels, m_channels, stride=2), BasicResBlock(m_channels, m_channels)
        )
        self.layer2 = nn.Sequential(
            BasicResBlock(m_channels, m_channels, stride=2), BasicResBlock(m_channels, m_channels)
        )
        self.conv2 = nn.Conv2d(
            m_channels, m_channels, kernel_size=3, stride=(2, 1), padding=1, bias=False
        )
        self.bn2 = nn.BatchNorm2d(m_channels)
        self.out_channels = m_channels * (feat_dim // 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = F.relu(self.bn1(self.conv1(x.unsqueeze(1))))
        out = self.layer2(self.layer1(out))
        out = F.relu(self.bn2(self.conv2(out)))
        return out.reshape(out.shape[0], out.shape[1] * out.shape[2], out.shape[3])


class StatsPool(nn.Module):
    """Mean and (unbiased) standard deviation over time."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cat([x.mean(dim=-1), x.std(dim=-1, unbiased=True)], dim=-1)


class TDNNLayer(nn.Module):
    def __init__(
        self, in_channels: int, out_channels: int, kernel_size: int, stride: int, dilation: int
    ) -> None:
        super().__init__()
        padding = (kernel_size - 1) // 2 * dilation
        self.linear = nn.Conv1d(
            in_channels, out_channels, kernel_size, stride, padding, dilation, bias=False
        )
        self.nonlinear = _batchnorm_relu(out_channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out: torch.Tensor = self.nonlinear(self.linear(x))
        return out


class CAMLayer(nn.Module):
    """A local convolution masked by context: the utterance's mean plus its segments' means."""

    SEGMENT = 100  # frames

    def __init__(
        self, bn_channels: int, out_channels: int, kernel_size: int, padding: int, dilation: int
    ) -> None:
        super().__init__()
        self.linear_local = nn.Conv1d(
            bn_channels, out_channels, kernel_size, padding=padding, dilation=dilation, bias=False
        )
        self.linear1 = nn.Conv1d(bn_channels, bn_channels // 2, 1)
        self.relu = nn.ReLU(inplace=True)
        self.linear2 = nn.Conv1d(bn_channels // 2, out_channels, 1)
        self.sigmoid = nn.Sigmoid()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.linear_local(x)
        context = x.mean(-1, keepdim=True) + self.seg_pooling(x)
        mask = self.sigmoid(self.linear2(self.relu(self.linear1(context))))
        return y * mask

    def seg_pooling(self, x: torch.Tensor) -> torch.Tensor:
        """Each frame gets the mean of its segment of SEGMENT frames (the last one may be short)."""
        size = self.SEGMENT
        seg = F.avg_pool1d(x, kernel_size=size, stride=size, ceil_mode=True)
        shape = seg.shape
        seg = seg.unsqueeze(-1).expand(*shape, size).reshape(*shape[:-1], -1)
        return seg[..., : x.shape[-1]]


class CAMDenseTDNNLayer(nn.Module):
    def __init__(self, channels: tuple[int, int, int], dilation: int) -> None:
        """`channels`: in, out and bottleneck."""
        super().__init__()
        in_channels, out_channels, bn_channels = channels
        self.nonlinear1 = _batchnorm_relu(in_channels)
        self.linear1 = nn.Conv1d(in_channels, bn_channels, 1, bias=False)
        self.nonlinear2 = _batchnorm_relu(bn_channels)
        padding = (DENSE_KERNEL - 1) // 2 * dilation
        self.cam_layer = CAMLayer(bn_channels, out_channels, DENSE_KERNEL, padding, dilation)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out: torch.Tensor = self.cam_layer(self.nonlinear2(self.linear1(self.nonlinear1(x))))
        return out


class CAMDenseTDNNBlock(nn.ModuleList):
    """Densely connected: each layer's output is appended to its input's channels."""

    def __init__(self, num_layers: int, channels: tuple[int, int, int], dilation: int) -> None:
        """`channels`: the block's in, each layer's out (its growth) and bottleneck."""
        super().__init__()
        in_channels, growth, bn_channels = channels
        for i in range(num_layers):
            widths = (in_channels + i * growth, growth, bn_channels)
            self.add_module(f"tdnnd{i + 1}", CAMDenseTDNNLayer(widths, dilation))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self:
            x = torch.cat([x, layer(x)], dim=1)
        return x


class TransitLayer(nn.Module):
    def __init__(self, in_channels: int, out_channels: int) -> None:
        super().__init__()
        self.nonlinear = _batchnorm_relu(in_channels)
        self.linear = nn.Conv1d(in_channels, out_channels, 1, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out: torch.Tensor = self.linear(self.nonlinear(x))
        return out


class DenseLayer(nn.Module):
    """The embedding: a linear map of the pooled statistics, batch-normalised without scale."""

    def __init__(self, in_channels: int, out_channels: int) -> None:
        super().__init__()
        self.linear = nn.Conv1d(in_channels, out_channels, 1, bias=False)
        self.nonlinear = nn.Sequential(
            OrderedDict([("batchnorm", nn.BatchNorm1d(out_channels, affine=False))])
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out: torch.Tensor = self.nonlinear(self.linear(x.unsqueeze(-1)).squeeze(-1))
        return out


class CAMPPlus(nn.Module):
    def __init__(
        self,
        feat_dim: int = FEATURES,
        embedding_size: int = 512,
        growth_rate: int = 32,
        bn_size: int = 4,
        init_channels: int = 128,
    ) -> None:
        super().__init__()
        self.head = FCM(feat_dim=feat_dim)
        layers: list[tuple[str, nn.Module]] = [
            ("tdnn", TDNNLayer(self.head.out_channels, init_channels, 5, stride=2, dilation=1))
        ]
        channels = init_channels
        for i, (num_layers, dilation) in enumerate(((12, 1), (24, 2), (16, 2)), start=1):
            block = CAMDenseTDNNBlock(
                num_layers, (channels, growth_rate, bn_size * growth_rate), dilation
            )
            channels += num_layers * growth_rate
            layers += [(f"block{i}", block), (f"transit{i}", TransitLayer(channels, channels // 2))]
            channels //= 2
        layers += [
            ("out_nonlinear", _batchnorm_relu(channels)),
            ("stats", StatsPool()),
            ("dense", DenseLayer(channels * 2, embedding_size)),
        ]
        self.xvector = nn.Sequential(OrderedDict(layers))
        for module in self.modules():
            if isinstance(module, nn.Conv1d | nn.Linear):
                nn.init.kaiming_normal_(module.weight.data)
                if module.bias is not None:
                    nn.init.zeros_(module.bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out: torch.Tensor = self.xvector(self.head(x.permute(0, 2, 1)))  # (N, T, F) -> (N, F, T)
        return out


def export_onnx(model: CAMPPlus, target: Path, comment: str) -> None:
    """Write `model` (in eval mode) to `target` as sherpa-onnx's SpeakerEmbeddingExtractor reads
    a 3D-Speaker model: input `x` (N, T, 80), output `embedding` (N, 192), and the metadata that
    tells it the sample rate and the features' normalisation. Writes `target` in place: the
    caller gives a temporary name where a reader may look. torch's exporter leaves its objects
    alive in the process that runs it (core/asr/demo_model.py says why that matters)."""
    import onnx

    sample = torch.randn(1, 2 * CAMLayer.SEGMENT + 37, FEATURES)  # more than one segment
    with torch.no_grad():
        torch.onnx.export(
            model.eval(),
            (sample,),
            str(target),
            dynamo=False,
            opset_version=13,
            input_names=["x"],
            output_names=["embedding"],
            dynamic_axes={"x": {0: "N", 1: "T"}, "embedding": {0: "N"}},
        )
    graph = onnx.load(str(target))
    for key, value in {**SHERPA_METADATA, "comment": comment}.items():
        entry = graph.metadata_props.add()
        entry.key, entry.value = key, str(value)
    onnx.save(graph, str(target))
