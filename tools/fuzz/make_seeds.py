"""Seed corpora and a dictionary for the etrt fuzzers, from real exports.

    python tools/fuzz/make_seeds.py OUT_DIR

writes OUT_DIR/program/*, OUT_DIR/data_map/*, OUT_DIR/xnnpack/* (small models exported plain,
with backend="xnnpack-all" and with external constants: programs, .ptd files and the delegate
blobs cut out of the delegated programs; and a program with state and dynamic shapes) and
OUT_DIR/etrt.dict (the schemas' file identifiers, format versions, every enum value and union
tag as the bytes a buffer holds, the backend id, every operator name the kernel library
registers, and the sizes the loaders bound). Models are tiny so that mutations stay fast; a
small vision block (tests/models.py) brings every node type the XNNPACK delegate has, a PT2E
int8 net its qs8 values, and torch's OpInfo samples a program for each operator etrt claims.
"""

from __future__ import annotations

import itertools
import re
import sys
from pathlib import Path

import etrt
import torch
from torch import nn

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))
from models import StepCache, make  # noqa: E402


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
        self.conv2 = nn.Conv2d(4, 4, 3, stride=2, padding=1, dilation=1, groups=2)
        self.fc = nn.Linear(4 * 1 * 1, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.max_pool2d(torch.relu(self.conv(x)), 2)
        y = torch.nn.functional.avg_pool2d(torch.clamp(self.conv2(y), -1, 1), 2)
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


class Upsampler(nn.Module):
    """Transposed 2-D and 1-D convolutions (output padding, groups, dilation) and a 3-D one."""

    def __init__(self) -> None:
        super().__init__()
        self.up = nn.ConvTranspose2d(2, 4, 3, stride=2, padding=1, output_padding=1, groups=2)
        self.up1d = nn.ConvTranspose1d(4, 2, 3, stride=2, dilation=2)
        self.vol = nn.Conv3d(1, 2, 2, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.up(x)  # [1, 4, 8, 8]
        z = self.up1d(y.mean(dim=2))  # [1, 2, 19]
        v = self.vol(y[:, :1, :4, :4].unsqueeze(1))  # [1, 2, 2, 5, 5]
        return z.sum() + v.mean()


class Fire(nn.Module):
    """A concatenation of two convolutions written in place: etrt_fused::conv2d's out_channel."""

    def __init__(self) -> None:
        super().__init__()
        self.squeeze = nn.Conv2d(4, 8, 3, padding=1)
        self.a, self.b = nn.Conv2d(8, 4, 3, padding=1), nn.Conv2d(8, 4, 3, padding=1)
        self.head = nn.Conv2d(8, 2, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q = torch.relu(self.squeeze(x))
        return self.head(torch.cat([torch.relu(self.a(q)), self.b(q)], 1))


class Layouts(nn.Module):
    """Ops that keep a channels-last input's layout: average pooling, uneven padding, a batch
    norm after a concatenation, nearest and bilinear resampling."""

    def __init__(self) -> None:
        super().__init__()
        self.a = nn.Conv2d(4, 8, 3, padding=1)
        self.b, self.c = nn.Conv2d(8, 8, 3), nn.Conv2d(8, 8, 2)
        self.norm = nn.BatchNorm2d(16)
        self.head = nn.Conv2d(16, 2, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        f = nn.functional
        y = f.avg_pool2d(self.a(x), 3, 1, 1)
        y = self.norm(torch.cat([self.c(y), self.b(f.pad(y, [0, 1, 0, 1]))], 1))
        up = f.interpolate(y, scale_factor=2.0) + f.interpolate(y, size=(10, 10), mode="bilinear")
        return self.head(up)


def _dynamic_seeds(out: Path) -> None:
    seq = torch.export.Dim("seq", min=1, max=7)
    program = etrt.export(
        StepCache().eval(),
        (torch.randn(3, 4), torch.arange(3)),
        dynamic_shapes=({0: seq}, {0: seq}),
    )
    (out / "program" / "cache-dynamic.etrt").write_bytes(program.to_bytes())


class CrossStage(nn.Module):
    """A channel split, a residual added after leaky ReLU (residual_last), a concatenation of
    the untouched half with a convolution's output: channels-last views and the 16-argument
    fused convolution."""

    def __init__(self) -> None:
        super().__init__()
        self.a, self.b = nn.Conv2d(4, 8, 3, padding=1), nn.Conv2d(4, 4, 3, padding=1)
        self.c, self.head = nn.Conv2d(4, 4, 1), nn.Conv2d(8, 2, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        f = nn.functional
        keep, y = f.leaky_relu(self.a(x), 0.1).split(4, dim=1)
        y = y + 1.0
        y = y + f.leaky_relu(self.b(y), 0.1)
        return self.head(torch.cat([keep, f.leaky_relu(self.c(y))], 1))


class Grouped(nn.Module):
    """Grouped convolutions on the NHWC kernels: groups of 4 input channels (joined into a
    vector of outputs), a grouped 1x1, a residual and ReLU in the call."""

    def __init__(self) -> None:
        super().__init__()
        self.a = nn.Conv2d(16, 16, 3, padding=1, groups=4)
        self.b = nn.Conv2d(16, 32, 1, groups=2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.b(nn.functional.relu(x + self.a(x)))


class Video(nn.Module):
    """3-D convolutions: a strided (1, 3, 3) one, then a padded 3x3x3 (a 2-D call a frame tap)."""

    def __init__(self) -> None:
        super().__init__()
        self.a = nn.Conv3d(2, 4, (1, 3, 3), stride=(1, 2, 2), padding=(0, 1, 1))
        self.b = nn.Conv3d(4, 4, 3, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.b(nn.functional.relu(self.a(x)))


MODELS = {
    "mlp": (Mlp, (torch.randn(2, 8),)),
    "cnn": (Cnn, (torch.randn(1, 2, 8, 8),)),
    "views": (Views, (torch.randn(4, 3),)),
    "attention": (Attention, (torch.randn(1, 4, 8),)),
    "upsampler": (Upsampler, (torch.randn(1, 2, 4, 4),)),
    "fire": (Fire, (torch.randn(1, 4, 6, 6),)),
    "layouts": (Layouts, (torch.randn(1, 4, 6, 6),)),
    "cross_stage": (CrossStage, (torch.randn(1, 4, 6, 6),)),
    "grouped": (Grouped, (torch.randn(1, 16, 5, 5),)),
    "video": (Video, (torch.randn(1, 2, 3, 6, 6),)),
    # conv, hardswish, sigmoid gate, global average pool, max pool, softmax, linear
    "mobile": (lambda: make("mobile")[0], make("mobile")[1]),
}


def _blobs(program: etrt.Program) -> list[bytes]:
    data, info = program.to_bytes(), program.info
    out = []
    for d in info.plan.delegates:
        seg = info.segment_table[d.segment]
        start = info.segment_base_offset + seg.offset
        out.append(data[start : start + seg.size])
    return out


_WIDTH = {
    "byte": 1,
    "ubyte": 1,
    "short": 2,
    "ushort": 2,
    "int": 4,
    "uint": 4,
    "long": 8,
    "ulong": 8,
}


def _bytes_word(v: int, width: int) -> str:
    return '"' + "".join(f"\\x{b:02x}" for b in v.to_bytes(width, "little", signed=v < 0)) + '"'


def _schema_words(text: str) -> set[str]:
    """Every enum value (at its underlying width) and union tag (a ubyte, NONE = 0) of a schema."""
    words = set()
    for kind, body in re.findall(r"enum \w+ : (\w+) \{([^}]*)\}", text):
        for value in re.findall(r"=\s*(-?\d+)", re.sub(r"//[^\n]*", "", body)):
            words.add(_bytes_word(int(value), _WIDTH[kind]))
    for body in re.findall(r"union \w+ \{([^}]*)\}", text):
        members = [m for m in re.sub(r"//[^\n]*", "", body).replace(",", " ").split() if m]
        words |= {_bytes_word(tag, 1) for tag in range(len(members) + 1)}
    return words


def _dictionary() -> str:
    names = {"XnnpackBackend", "forward"}
    numbers: set[str] = set()
    for schema in sorted((ROOT / "schema").glob("*.fbs")):
        text = schema.read_text()
        names |= set(re.findall(r'file_identifier "([^"]+)"', text))
        numbers |= _schema_words(text)
    register = (ROOT / "src" / "kernels" / "register.cpp").read_text()
    # Every namespace the registry holds: aten, etrt_prim, etrt_fused, etrt_quant, ...
    names |= set(re.findall(r'"([a-z_]+::[A-Za-z0-9_.]+)"', register))
    # Format versions (uint32): the ones the loaders read, and their neighbours.
    numbers |= {_bytes_word(v, 4) for v in (0, 1, 2, 3)}
    # Sizes and offsets the loaders bound: 0, 1, -1, 64, 2^31, 2^32, 2^36, 2^40, 2^62 as int64.
    numbers |= {_bytes_word(v, 8) for v in (0, 1, -1, 64, 2**31, 2**32, 2**36, 2**40, 2**62)}
    lines = [f'"{w}"' for w in sorted(names)] + sorted(numbers)
    return "\n".join(lines) + "\n"


MAX_SEED_BYTES = 16384  # run.sh's -max_len: a larger seed would reach the fuzzer cut short


def _opset_seeds(out: Path) -> int:
    """A program per operator etrt claims, from torch's own OpInfo samples (the ones
    tests/etrt_python/test_opinfo.py checks against eager): up to two float32 samples and one
    int64 sample in one program, so the fuzzer starts with every kernel's arguments right.
    Returns how many were written."""
    sys.path.insert(0, str(ROOT / "tests" / "etrt_python"))
    import test_opinfo as oi  # imported here: torch's OpInfo machinery is slow to import

    written = 0
    for op in oi.OPS:
        cases = []
        for dtype, count in ((torch.float32, 2), (torch.int64, 1)):
            if dtype not in op.supported_dtypes("cpu"):
                continue
            for index, sample in enumerate(itertools.islice(oi._samples(op, dtype), count)):
                case = oi._Case(op, sample, dtype, index)
                if case.skip_reason is None:
                    cases.append(case)
        if not cases:
            continue
        tensors = tuple(t for c in cases for t in c.tensors)
        try:
            program = etrt.export_program(torch.export.export(oi._Group(cases), tensors))
        except Exception:  # unexportable or refused: no seed, nothing to fuzz
            continue
        data = program.to_bytes()
        if len(data) <= MAX_SEED_BYTES:
            (out / "program" / f"opset-{oi._op_id(op)}.etrt").write_bytes(data)
            written += 1
    return written


class Int8Residual(nn.Module):
    """PT2E int8 (etrt.quantize): a convolution, a depthwise one and a residual addition, which
    backend="xnnpack-all" delegates as qs8 values with per-channel int8 weights."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Sequential(nn.Conv2d(2, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU())
        self.dw = nn.Sequential(nn.Conv2d(4, 4, 3, padding=1, groups=4), nn.BatchNorm2d(4))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.conv(x)
        return self.dw(y) + y


class Int8SqueezeExcite(nn.Module):
    """PT2E int8 that folds into every integer kernel between the products (etrt_quant::lookup
    for hardswish and hardsigmoid, mean, mul, max_pool2d, avg_pool2d, and aten::cat of int8),
    as tests/etrt_python/test_quantized.py's SqueezeExcite, with 8 channels on 6 x 6, and an
    integer linear head."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(2, 8, 3, padding=1)
        self.dw = nn.Conv2d(8, 8, 3, padding=1, groups=8)
        self.fc1, self.fc2 = nn.Conv2d(8, 4, 1), nn.Conv2d(4, 8, 1)
        self.pw, self.head = nn.Conv2d(16, 4, 1), nn.Conv2d(4, 4, 1)
        self.fc = nn.Linear(16, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = nn.functional.hardswish(self.conv(x))
        z = self.dw(y)
        gate = nn.functional.adaptive_avg_pool2d(z, 1)
        gate = nn.functional.hardsigmoid(self.fc2(torch.relu(self.fc1(gate))))
        z = nn.functional.max_pool2d(torch.cat([z * gate, z], 1), 3, 2, 1)
        z = self.head(nn.functional.avg_pool2d(self.pw(z), 3, 2, 1, ceil_mode=True))
        return self.fc(z.flatten(1))


class WeightOnly(nn.Module):
    """An embedding and two linears: torchao's weight-only int4 (groups of 32), int8 and
    dynamic int8 schemes make etrt_quant::weight_only_embedding, weight_only_linear, int8_mm
    (8da4w's dynamic_int4_linear: a linear of its own below)."""

    def __init__(self) -> None:
        super().__init__()
        self.tok = nn.Embedding(8, 32)
        self.a, self.b = nn.Linear(32, 32), nn.Linear(32, 8)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.b(torch.relu(self.a(self.tok(ids))))


def _int8_seeds(out: Path) -> None:
    """The int8 delegate's blob fields (datatypes, scales, zero points, per-channel scales), and
    the same nets run by etrt's own integer kernels (plain export), so the program fuzzer starts
    from every etrt_quant kernel with valid arguments."""
    x = torch.randn(1, 2, 6, 6)
    model = etrt.quantize(Int8Residual().eval(), (x,), calibration=[(torch.randn(1, 2, 6, 6),)])
    program = etrt.export(model, (x,), backend="xnnpack-all")
    (out / "program" / "int8-xnnpack.etrt").write_bytes(program.to_bytes())
    for i, blob in enumerate(_blobs(program)):
        (out / "xnnpack" / f"int8-{i}.xnnpack").write_bytes(blob)
    (out / "program" / "int8-residual.etrt").write_bytes(etrt.export(model, (x,)).to_bytes())
    se = etrt.quantize(Int8SqueezeExcite().eval(), (x,), calibration=[(torch.randn(1, 2, 6, 6),)])
    (out / "program" / "int8-squeeze-excite.etrt").write_bytes(etrt.export(se, (x,)).to_bytes())
    ids = torch.tensor([[1, 5, 7]])
    for scheme, group_size in (("int4-weight", 32), ("int8-weight", None)):
        wo = etrt.quantize(WeightOnly().eval(), None, scheme=scheme, group_size=group_size)
        (out / "program" / f"{scheme}.etrt").write_bytes(etrt.export(wo, (ids,)).to_bytes())
    # dynamic int8 activations: the per-token quantization around int8_mm (no embedding: small)
    mm = etrt.quantize(nn.Sequential(nn.Linear(16, 8)).eval(), None, scheme="int8-dynamic")
    data = etrt.export(mm, (torch.randn(2, 16),)).to_bytes()
    (out / "program" / "int8-dynamic.etrt").write_bytes(data)
    # 8da4w: int8 activations into dynamic_int4_linear
    da4 = etrt.quantize(
        nn.Sequential(nn.Linear(32, 8)).eval(), None, scheme="int8-dynamic-int4-weight"
    )
    data = etrt.export(da4, (torch.randn(2, 32),)).to_bytes()
    (out / "program" / "int8-dynamic-int4-weight.etrt").write_bytes(data)


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
    print(f"{_opset_seeds(out)} operator seeds", file=sys.stderr)
    _dynamic_seeds(out)
    _int8_seeds(out)
    (out / "etrt.dict").write_text(_dictionary())


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: make_seeds.py OUT_DIR")
    main(Path(sys.argv[1]))
