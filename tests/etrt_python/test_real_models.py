"""Architectures people export, small enough to run in a test: each is exported, run by the
in-tree etrt_runner (release, then ASan and UBSan) and compared with eager PyTorch. Every
operator they decompose into must have a kernel (allow_missing_ops stays off).
"""

from __future__ import annotations

import math
import re
import subprocess
from collections.abc import Callable
from pathlib import Path

import etrt
import models
import pytest
import runtime_build
import torch
import torch.nn.functional as F
from etrt.errors import ExportError
from runtime_build import ToolRunner
from suites import gate_subset
from torch import nn

pytestmark = [pytest.mark.slow, pytest.mark.models]


class GptBlock(nn.Module):
    def __init__(self, d: int = 64, heads: int = 4) -> None:
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.fc, self.out = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, c = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(c, dim=2)
        q, k, v = (z.view(b, t, self.heads, c // self.heads).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).contiguous().view(b, t, c))
        return x + self.out(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))


class Gpt(nn.Module):
    """Token and position embeddings, two causal blocks, a vocabulary head with log-softmax."""

    def __init__(self, vocab: int = 100, d: int = 64, context: int = 32) -> None:
        super().__init__()
        self.tok, self.pos = nn.Embedding(vocab, d), nn.Embedding(context, d)
        self.blocks = nn.Sequential(GptBlock(d), GptBlock(d))
        self.ln, self.head = nn.LayerNorm(d), nn.Linear(d, vocab, bias=False)

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        x = self.tok(idx) + self.pos(torch.arange(idx.shape[1]))
        return F.log_softmax(self.head(self.ln(self.blocks(x))), dim=-1)


class RmsNorm(nn.Module):
    def __init__(self, d: int, eps: float = 1e-6) -> None:
        super().__init__()
        self.eps, self.weight = eps, nn.Parameter(torch.rand(d) + 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class LlamaBlock(nn.Module):
    """RMSNorm, grouped-query causal attention (8 query heads over 2 key/value heads), SwiGLU."""

    def __init__(self, d: int = 64, heads: int = 8, kv_heads: int = 2) -> None:
        super().__init__()
        self.h, self.kvh, self.hd = heads, kv_heads, d // heads
        self.n1, self.n2 = RmsNorm(d), RmsNorm(d)
        self.wq = nn.Linear(d, d, bias=False)
        self.wkv = nn.Linear(d, 2 * kv_heads * self.hd, bias=False)
        self.wo = nn.Linear(d, d, bias=False)
        self.w1, self.w3 = nn.Linear(d, 96, bias=False), nn.Linear(d, 96, bias=False)
        self.w2 = nn.Linear(96, d, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        h = self.n1(x)
        q = self.wq(h).view(b, t, self.h, self.hd).transpose(1, 2)
        k, v = self.wkv(h).view(b, t, 2, self.kvh, self.hd).permute(2, 0, 3, 1, 4)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
        x = x + self.wo(y.transpose(1, 2).reshape(b, t, d))
        h = self.n2(x)
        return x + self.w2(F.silu(self.w1(h)) * self.w3(h))


class ResBlock(nn.Module):
    def __init__(self, c: int) -> None:
        super().__init__()
        self.c1, self.b1 = nn.Conv2d(c, c, 3, padding=1, bias=False), nn.BatchNorm2d(c)
        self.c2, self.b2 = nn.Conv2d(c, c, 3, padding=1, bias=False), nn.BatchNorm2d(c)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.relu(x + self.b2(self.c2(F.relu(self.b1(self.c1(x))))))


class ResNet(nn.Module):
    """Stem, two residual blocks with batch norm, global average pooling, a classifier."""

    def __init__(self) -> None:
        super().__init__()
        self.stem = nn.Sequential(
            nn.Conv2d(3, 16, 3, padding=1, bias=False), nn.BatchNorm2d(16), nn.ReLU()
        )
        self.blocks = nn.Sequential(ResBlock(16), ResBlock(16))
        self.pool, self.fc = nn.AdaptiveAvgPool2d(1), nn.Linear(16, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(torch.flatten(self.pool(self.blocks(self.stem(x))), 1))


def mobilenet_like() -> nn.Module:
    """Hardswish, a depthwise convolution, SiLU, ReLU6, average pooling, a sigmoid head."""
    return nn.Sequential(
        nn.Conv2d(3, 8, 3, stride=2, padding=1),
        nn.BatchNorm2d(8),
        nn.Hardswish(),
        nn.Conv2d(8, 8, 3, padding=1, groups=8),
        nn.SiLU(),
        nn.Conv2d(8, 16, 1),
        nn.ReLU6(),
        nn.AvgPool2d(2),
        nn.Flatten(),
        nn.Linear(16 * 8 * 8, 10),
        nn.Sigmoid(),
    )


class VggHead(nn.Module):
    """Adaptive pooling to 3x3, two branches joined by cat, LeakyReLU, Tanh, log-softmax."""

    def __init__(self) -> None:
        super().__init__()
        self.a, self.b = nn.Conv2d(4, 6, 3, padding=1), nn.Conv2d(4, 2, 1)
        self.pool = nn.AdaptiveAvgPool2d((3, 3))
        self.fc = nn.Linear(8 * 9, 5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.cat([F.leaky_relu(self.a(x), 0.2), torch.tanh(self.b(x))], dim=1)
        return F.log_softmax(self.fc(torch.flatten(self.pool(y), 1)), dim=1)


class MinGptAttention(nn.Module):
    """Attention written out by hand: a causal mask buffer, masked_fill, softmax, dtype casts."""

    def __init__(self, d: int = 32, heads: int = 4, context: int = 16) -> None:
        super().__init__()
        self.h = heads
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.register_buffer(
            "mask", torch.tril(torch.ones(context, context)).view(1, 1, context, context)
        )

    def forward(self, x: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
        b, t, c = x.shape
        q, k, v = self.qkv(x).split(c, dim=2)
        q, k, v = (z.view(b, t, self.h, c // self.h).transpose(1, 2) for z in (q, k, v))
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.mask[:, :, :t, :t] == 0, float("-inf"))
        y = (F.softmax(att, dim=-1) @ v).transpose(1, 2).contiguous().view(b, t, c)
        keep = (ids != 0).unsqueeze(-1)  # padding positions give zeros
        return self.proj(y).masked_fill(~keep, 0.0) + ids.float().unsqueeze(-1) * 0.01


class UNetDecoder(nn.Module):
    """Group norm, nearest and bilinear upsampling, padding to a skip's size, cat, SiLU."""

    def __init__(self) -> None:
        super().__init__()
        self.gn = nn.GroupNorm(2, 8)
        self.up = nn.Conv2d(8, 4, 3, padding=1)
        self.mix = nn.Conv2d(8, 4, 1)

    def forward(self, x: torch.Tensor, skip: torch.Tensor) -> torch.Tensor:
        h = F.silu(self.gn(x))
        h = self.up(F.interpolate(h, scale_factor=2, mode="nearest"))
        h = F.pad(h, (0, 1, 1, 0))  # to the skip's odd size
        y = self.mix(torch.cat([h, skip], dim=1))
        return F.interpolate(y, size=(13, 9), mode="bilinear", align_corners=False)


class TransposedDecoder(nn.Module):
    """A segmentation decoder and a vocoder-like 1-D upsampler: transposed convolutions after
    channels-last layers, with output padding, groups, dilation and batch norm."""

    def __init__(self) -> None:
        super().__init__()
        self.enc = nn.Conv2d(3, 16, 3, stride=2, padding=1)
        self.up1 = nn.ConvTranspose2d(16, 8, 3, stride=2, padding=1, output_padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.up2 = nn.ConvTranspose2d(8, 8, 4, stride=2, padding=1, groups=2, dilation=1)
        self.head = nn.Conv2d(8, 5, 1)
        self.up1d = nn.ConvTranspose1d(5, 3, 5, stride=3, padding=1, dilation=2)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        h = F.relu(self.bn(self.up1(F.relu(self.enc(x)))))
        seg = self.head(F.relu(self.up2(h)))
        return seg, self.up1d(seg.mean(dim=2))


class VideoBlock(nn.Module):
    """torchvision's R(2+1)D in small: a spatial then a temporal 3-D convolution, batch norm,
    a grouped 3x3x3 one, 3-D pooling."""

    def __init__(self) -> None:
        super().__init__()
        self.spatial = nn.Conv3d(3, 8, (1, 3, 3), stride=(1, 2, 2), padding=(0, 1, 1), bias=False)
        self.temporal = nn.Conv3d(8, 8, (3, 1, 1), padding=(1, 0, 0), bias=False)
        self.bn = nn.BatchNorm3d(8)
        self.grouped = nn.Conv3d(8, 12, 3, padding=1, groups=4)
        self.fc = nn.Linear(12, 5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = F.relu(self.bn(self.temporal(self.spatial(x))))
        h = F.max_pool3d(F.relu(self.grouped(h)), (1, 2, 2))
        return self.fc(F.adaptive_avg_pool3d(h, 1).flatten(1))


def _inputs(*shapes: tuple[int, ...]) -> tuple[torch.Tensor, ...]:
    gen = torch.Generator().manual_seed(7)
    return tuple(torch.randn(s, generator=gen) for s in shapes)


MODELS: dict[str, Callable[[], tuple[nn.Module, tuple[torch.Tensor, ...]]]] = {
    "gpt": lambda: (
        Gpt(),
        (torch.randint(0, 100, (2, 32), generator=torch.Generator().manual_seed(3)),),
    ),
    "llama_block": lambda: (LlamaBlock(), _inputs((2, 24, 64))),
    "resnet": lambda: (ResNet(), _inputs((2, 3, 32, 32))),
    "mobilenet_like": lambda: (mobilenet_like(), _inputs((2, 3, 32, 32))),
    "vgg_head": lambda: (VggHead(), _inputs((2, 4, 7, 7))),
    "mingpt_attention": lambda: (
        MinGptAttention(),
        (*_inputs((2, 12, 32)), torch.tensor([[3] * 9 + [0] * 3, [1] * 12])),
    ),
    "unet_decoder": lambda: (UNetDecoder(), _inputs((2, 8, 6, 4), (2, 4, 13, 9))),
    "transposed_decoder": lambda: (TransposedDecoder(), _inputs((2, 3, 10, 14))),
    "video_block": lambda: (VideoBlock(), _inputs((2, 3, 4, 12, 10))),
}


def _randomise_batch_norm(model: nn.Module) -> None:
    # Fresh running statistics are 0 and 1: give them values a trained model would have.
    gen = torch.Generator().manual_seed(11)
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d | nn.BatchNorm3d):
            m.running_mean.copy_(torch.randn(m.num_features, generator=gen) * 0.1)
            m.running_var.copy_(torch.rand(m.num_features, generator=gen) + 0.5)
            m.weight.data.copy_(torch.rand(m.num_features, generator=gen) + 0.5)
            m.bias.data.copy_(torch.randn(m.num_features, generator=gen) * 0.1)


@pytest.mark.parametrize("name", gate_subset(sorted(MODELS), {"gpt", "resnet"}))
def test_model_matches_eager(tool_runner: ToolRunner, tmp_path: Path, name: str) -> None:
    torch.manual_seed(0)
    model, inputs = MODELS[name]()
    _randomise_batch_norm(model)
    model.eval()
    run = tool_runner.run_exported(tmp_path, model, inputs)
    ops = sorted(set(run.program.operator_names))
    print(f"{name}: max abs diff {run.max_abs_diff():.3g}, ops {ops}")
    assert run.max_abs_diff() <= 2e-5


# Edges of single operators the models above do not reach.
OP_CASES: dict[str, tuple[Callable[..., torch.Tensor], tuple[torch.Tensor, ...]]] = {
    "clamp_min_only": (lambda x: torch.clamp(x, min=-0.5), _inputs((3, 17))),
    "clamp_max_only": (lambda x: torch.clamp(x, max=0.25), _inputs((3, 17))),
    "hardtanh_bounds": (lambda x: F.hardtanh(x, -0.3, 0.7), _inputs((4, 9))),
    "exp_overflow": (lambda x: torch.exp(x * 60.0), _inputs((64,))),
    "tanh_small_and_large": (
        lambda x, s: torch.tanh(x * s),
        (*_inputs((40,)), torch.logspace(-6, 1, 40, dtype=torch.float32)),
    ),
    "sigmoid_extremes": (lambda x: torch.sigmoid(x * 50.0), _inputs((5, 8))),
    "pow_general": (lambda x: (x.abs() + 0.1).pow(1.7) + x.pow(3) + x.pow(-2), _inputs((6, 6))),
    "abs_rsqrt": (lambda x: torch.rsqrt(x.abs() + 1e-3), _inputs((33,))),
    "scalar_arith": (lambda x: (x + 2.5) - 1.25 * 2 + (x - 3) / 4, _inputs((2, 3, 5))),
    "sum_all": (lambda x: x.sum(dim=(0, 1, 2)), _inputs((3, 4, 5))),
    "sum_keepdim": (lambda x: x.sum(dim=(0, 2), keepdim=True), _inputs((3, 4, 5))),
    "mean_transposed": (lambda x: x.transpose(0, 2).mean(dim=1), _inputs((3, 4, 5))),
    "log_softmax_middle": (lambda x: F.log_softmax(x, dim=1), _inputs((2, 7, 3))),
    "avg_pool_ceil_no_pad_count": (
        lambda x: F.avg_pool2d(x, 3, stride=2, padding=1, ceil_mode=True, count_include_pad=False),
        _inputs((2, 3, 8, 9)),
    ),
    "avg_pool_divisor": (lambda x: F.avg_pool2d(x, 2, divisor_override=3), _inputs((1, 2, 6, 6))),
    "adaptive_uneven": (lambda x: F.adaptive_avg_pool2d(x, (4, 3)), _inputs((2, 3, 10, 7))),
    "cat_last_dim": (
        lambda a, b: torch.cat([a, b.transpose(0, 1)], dim=-1),
        _inputs((3, 4), (5, 3)),
    ),
    "arange_float": (lambda x: x + torch.arange(0.5, 3.0, 0.25), _inputs((2, 10))),
    # antialiased bilinear resampling (torchvision's Resize on tensors, vision models'
    # own resizes): shrinking by non-integer factors, one dimension growing, align_corners,
    # a scale factor, a strided input, each as ATen's separable taps
    "upsample_bilinear_antialias": (
        lambda x: torch.cat(
            [
                F.interpolate(x, size=(7, 9), mode="bilinear", antialias=True).flatten(),
                F.interpolate(x, size=(5, 40), mode="bilinear", antialias=True).flatten(),
                F.interpolate(
                    x, size=(6, 4), mode="bilinear", antialias=True, align_corners=True
                ).flatten(),
                F.interpolate(x, scale_factor=0.37, mode="bilinear", antialias=True).flatten(),
                F.interpolate(
                    x.transpose(2, 3), size=(11, 3), mode="bilinear", antialias=True
                ).flatten(),
                torch.ops.aten._upsample_bilinear2d_aa(x, [9, 13], False, 0.6, None).flatten(),
            ]
        ),
        _inputs((2, 3, 17, 23)),
    ),
    # a float count summed into int32, as transformers offsets its experts' rows: ATen casts
    # each element first (1.7 -> 1, -2.5 -> -2)
    "cumsum_float_to_int32": (
        lambda x: torch.cumsum(x * 2.5, 0, dtype=torch.int32).float() + x,
        _inputs((9,)),
    ),
    # histc as ATen bins: its data's range when min == max, one value widened by one each way,
    # elements outside [min, max] left out, the last bin closed on the right
    "histc": (
        lambda x: torch.cat(
            [
                torch.histc(x, bins=7),
                torch.histc(x, bins=5, min=-1.0, max=1.0),
                torch.histc(x[:1].expand(4), bins=3),
                torch.histc(torch.arange(6.0), bins=4, min=0, max=5),
            ]
        ),
        _inputs((40,)),
    ),
    # every dtype, in ATen's accumulate types: int64 for integers (start and step truncated,
    # uint8 wrapping: 250, 253, 0, 3), float for the 16-bit floats (hybrid linear-attention
    # decoders build a uint8 arange)
    "arange_dtypes": (
        lambda x: (
            x
            + torch.arange(250, 262, 3, dtype=torch.uint8).float()
            + torch.arange(-3, 5, 2, dtype=torch.int8).float()
            + torch.arange(0.5, 5.9, 1.5, dtype=torch.int32).float()
            + torch.arange(0.1, 1.3, 0.3, dtype=torch.float16).float()
            + torch.arange(0.1, 1.3, 0.3, dtype=torch.bfloat16).float()
        ),
        _inputs((2, 4)),
    ),
    "compare_and_logic": (
        lambda a, b: ((a > b) & (a >= 0)) | ((a < -0.5) ^ (b <= a)) | (a == b) | (a.ne(0.25)),
        _inputs((3, 5), (5,)),
    ),
    "int_compare_and_not": (
        lambda a: torch.bitwise_not(a) * (a > 2) + (a.le(1)).long() + (~(a == 3)).long(),
        (torch.arange(-3, 6).reshape(3, 3),),
    ),
    "casts": (
        lambda x: (x * 3).long().float() + (x > 0).float() + (x * 2).int().long(),
        _inputs((4, 4)),
    ),
    "neg_sqrt_log_min_max": (
        lambda a, b: (
            torch.maximum(a, b)
            - torch.minimum(a, -b)
            + (a.abs() + 1).log()
            - (b.abs()).sqrt().neg()
        ),
        _inputs((2, 6), (6,)),
    ),
    "full_and_zeros": (
        lambda x: x + torch.full((4,), 1.5) - torch.zeros(4) + torch.ones_like(x),
        _inputs((3, 4)),
    ),
    "amax_argmax": (
        lambda x: x.amax(dim=(0, 2)) + x.argmax(2).float().sum(0) + x.argmax().float(),
        _inputs((3, 4, 5)),
    ),
    "mean_sum_all": (lambda x: x.mean() + x.sum() * 0.5, _inputs((7, 3))),
    "pad_crop_and_grow": (lambda x: F.pad(x, (2, -1, -1, 3), value=0.5), _inputs((2, 5, 6))),
    "repeat": (lambda x: x.repeat(2, 1, 3), _inputs((3, 4))),
    "advanced_index": (
        lambda x: (
            x[torch.tensor([2, 0, -1])] + x[:, torch.tensor([[1], [3]]), torch.tensor([0, 2])].sum()
        ),
        _inputs((4, 5, 3)),
    ),
    "advanced_index_apart": (
        lambda x: x[torch.tensor([1, 0]), :, torch.tensor([2, 1])],
        _inputs((3, 4, 5)),
    ),
    "upsample_align_corners": (
        lambda x: F.interpolate(x, scale_factor=(1.5, 2.5), mode="bilinear", align_corners=True),
        _inputs((1, 2, 4, 3)),
    ),
    "upsample_nearest_size": (
        lambda x: F.interpolate(x, size=(7, 5), mode="nearest"),
        _inputs((1, 3, 3, 4)),
    ),
    "group_norm_no_affine": (lambda x: F.group_norm(x, 3, eps=1e-3), _inputs((2, 6, 5))),
    "embedding_int_ids": (
        lambda w: F.embedding(torch.tensor([[0, 3], [2, 2]], dtype=torch.int32), w),
        _inputs((4, 6)),
    ),
    # index views: transposed, and expanded with stride 0 (transformers' position-id buffers)
    "embedding_strided_ids": (
        lambda w, ids: F.embedding(ids.t(), w).sum(1) + F.embedding(ids[:1].expand(3, 5), w).sum(0),
        (*_inputs((7, 6)), torch.tensor([[0, 3, 6, 1, 2], [5, 5, 4, 0, 1], [2, 6, 3, 3, 0]])),
    ),
    # one element of stride 2: torch's reference index_fill copies it with prims.copy_strided
    "index_fill_strided_single": (
        lambda x: x[:2][::2].index_fill(0, torch.tensor([0]), -8.5) + x[1:2],
        _inputs((5,)),
    ),
}


@pytest.mark.parametrize("case", sorted(OP_CASES))
def test_operator_edges_match_eager(tool_runner: ToolRunner, tmp_path: Path, case: str) -> None:
    fn, inputs = OP_CASES[case]
    run = tool_runner.run_exported(tmp_path, models.Fn(fn), inputs)
    print(f"{case}: max abs diff {run.max_abs_diff():.3g}")
    for got, want in zip(run.got, run.expected, strict=True):
        torch.testing.assert_close(
            torch.from_numpy(got.copy()), torch.from_numpy(want), rtol=2e-6, atol=1e-6
        )


class Lookup(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.emb = nn.Embedding(10, 4)

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        return self.emb(idx)


def test_embedding_index_out_of_range_is_an_error(tmp_path: Path) -> None:
    runner = runtime_build.tool_runner("release")
    program = etrt.export(Lookup(), (torch.tensor([1, 2, 3]),))
    path = tmp_path / "lookup.etrt"
    program.save(path)
    (tmp_path / "in.bin").write_bytes(torch.tensor([1, 12, 3]).numpy().tobytes())
    proc = subprocess.run(
        [str(runner.exe), str(path), "--inputs", str(tmp_path / "in.bin")],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 1
    assert re.search(
        r"aten::embedding: index 12 is out of range for an embedding of 10 rows", proc.stderr
    )


def test_refused_op_is_named_at_export() -> None:
    with pytest.raises(ExportError, match=r"node nonzero: etrt does not run aten::nonzero: its"):
        etrt.export(models.Fn(lambda x: torch.nonzero(x)), (torch.randn(3, 2),))


def test_three_dimensional_transposed_convolution_is_refused_at_export() -> None:
    with pytest.raises(ExportError, match=r"3-D transposed convolution has no etrt kernel"):
        etrt.export(nn.ConvTranspose3d(2, 3, 2), (torch.randn(1, 2, 4, 4, 4),))
