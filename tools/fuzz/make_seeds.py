"""Seed corpora and a dictionary for the etrt fuzzers, from real exports.

    python tools/fuzz/make_seeds.py OUT_DIR

writes OUT_DIR/program/*, OUT_DIR/data_map/*, OUT_DIR/xnnpack/* (small models exported plain,
with backend="xnnpack-all" and with external constants: programs, .ptd files and the delegate
blobs cut out of the delegated programs; and a program with state and dynamic shapes) and
OUT_DIR/etrt.dict (the schemas' file identifiers, backend id and every operator name the kernel
library registers). Models are tiny so that
mutations stay fast.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import etrt
import torch
from torch import nn

ROOT = Path(__file__).resolve().parents[2]


class Mlp(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.a, self.b = nn.Linear(8, 16), nn.Linear(16, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(self.b(torch.relu(self.a(x))), dim=-1)


class Cnn(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(2, 4, 3, padding=1)
        self.conv2 = nn.Conv2d(4, 4, 3, stride=2, dilation=1, groups=2)
        self.fc = nn.Linear(4 * 1 * 1, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.max_pool2d(torch.relu(self.conv(x)), 2)
        y = torch.nn.functional.avg_pool2d(torch.clamp(self.conv2(y), -1, 1), 1)
        return self.fc(y.flatten(1))


class Views(nn.Module):
    """View kernels with file-controlled geometry: expand, slice, select, split, permute."""

    def __init__(self) -> None:
        super().__init__()
        self.w = nn.Parameter(torch.arange(6.0).reshape(2, 3))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        e = x[:, :1].expand(4, 3)
        a, b = torch.split(e + self.w.repeat(2, 1), [1, 3], dim=0)
        s = x.unsqueeze(0).permute(2, 1, 0).reshape(3, 4)[1:3:1, ::2]
        return (a.sum() + b.select(1, 2).sum(0, keepdim=True) + s.mean()).view(-1)


class Attention(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(8)
        self.qkv = nn.Linear(8, 24)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q, k, v = self.qkv(self.norm(x)).chunk(3, dim=-1)
        q, k, v = (t.view(1, 4, 2, 4).transpose(1, 2) for t in (q, k, v))
        y = torch.nn.functional.scaled_dot_product_attention(q, k, v)
        return torch.nn.functional.gelu(y.transpose(1, 2).reshape(1, 4, 8)) + x


class Cache(nn.Module):
    """State and dynamic shapes: a cache written at positions (in place), a step counter, a
    sequence dimension in [1, 7] with size arithmetic on it."""

    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(4, 4)
        self.register_buffer("cache", torch.zeros(8, 4))
        self.register_buffer("steps", torch.zeros(1, dtype=torch.int64))

    def forward(self, x: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        self.cache.index_copy_(0, positions, self.proj(x))
        self.steps.add_(1)
        mask = torch.arange(8)[None, :] <= positions[:, None]
        scores = (x @ self.cache.t()).masked_fill(~mask, -1e9).softmax(-1)
        return (scores @ self.cache).view(x.shape[0] * 2, 2) + self.steps


def _dynamic_seeds(out: Path) -> None:
    seq = torch.export.Dim("seq", min=1, max=7)
    program = etrt.export(
        Cache().eval(), (torch.randn(3, 4), torch.arange(3)), dynamic_shapes=({0: seq}, {0: seq})
    )
    (out / "program" / "cache-dynamic.etrt").write_bytes(program.to_bytes())


MODELS = {
    "mlp": (Mlp, (torch.randn(2, 8),)),
    "cnn": (Cnn, (torch.randn(1, 2, 8, 8),)),
    "views": (Views, (torch.randn(4, 3),)),
    "attention": (Attention, (torch.randn(1, 4, 8),)),
}


def _blobs(program: etrt.Program) -> list[bytes]:
    data, info = program.to_bytes(), program.info
    out = []
    for d in info.plan.delegates:
        seg = info.segment_table[d.segment]
        start = info.segment_base_offset + seg.offset
        out.append(data[start : start + seg.size])
    return out


def _dictionary() -> str:
    words = {"XnnpackBackend", "forward"}
    for schema in sorted((ROOT / "schema").glob("*.fbs")):
        words |= set(re.findall(r'file_identifier "([^"]+)"', schema.read_text()))
    register = (ROOT / "src" / "kernels" / "register.cpp").read_text()
    words |= set(re.findall(r'"((?:aten|etrt_prim)::[A-Za-z0-9_.]+)"', register))
    lines = [f'"{w}"' for w in sorted(words)]
    # Sizes and offsets the loaders bound: 0, 1, -1, 64, 2^31, 2^32, 2^36, 2^40, 2^62 as int64.
    for v in (0, 1, -1, 64, 2**31, 2**32, 2**36, 2**40, 2**62):
        lines.append(
            '"' + "".join(f"\\x{b:02x}" for b in v.to_bytes(8, "little", signed=True)) + '"'
        )
    return "\n".join(lines) + "\n"


def main(out: Path) -> None:
    torch.manual_seed(0)
    for sub in ("program", "data_map", "xnnpack"):
        (out / sub).mkdir(parents=True, exist_ok=True)
    for name, (cls, inputs) in MODELS.items():
        model = cls().eval()
        variants = {
            "plain": {},
            "xnnpack": {"backend": "xnnpack-all"},
            "external": {"external_constants": True},
        }
        for variant, kwargs in variants.items():
            try:
                program = etrt.export(model, inputs, **kwargs)  # type: ignore[arg-type]
            except etrt.ExportError as exc:
                print(f"skip {name}/{variant}: {exc}", file=sys.stderr)
                continue
            (out / "program" / f"{name}-{variant}.etrt").write_bytes(program.to_bytes())
            if program.data_map is not None:
                (out / "data_map" / f"{name}.ptd").write_bytes(bytes(program.data_map))
            for i, blob in enumerate(_blobs(program)):
                (out / "xnnpack" / f"{name}-{i}.xnnpack").write_bytes(blob)
    _dynamic_seeds(out)
    (out / "etrt.dict").write_text(_dictionary())


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: make_seeds.py OUT_DIR")
    main(Path(sys.argv[1]))
