"""What the missing concatenation of Debian's XNNPACK costs SqueezeNet 1.1: the delegate's
rewrite (a convolution of cat(a, b) becomes conv(a, W_a) + conv(b, W_b)) against a concatenation
that would be free, and against one that copies.

    python benchmarks/xnnpack_concat.py [--runs N] [--rounds N] [--build-dir build/runtime]

For every convolution that reads a concatenation in SqueezeNet 1.1 at batch 1 (the squeeze of
the next fire module, and the classifier), three XNNPACK programs are timed in turn, one thread:
`split`, what the exporter makes of conv(cat(a, b)); `joined`, the same convolution over an input
that is already concatenated; and `copy`, one extra pass over that input (a multiply after the
clamp), which is what materialising the concatenation would add. Each figure is the smallest of
the rounds' medians. `split - joined` is what the rewrite costs over a free concatenation;
`joined + copy - split` is what it saves over a copying one (positive: the rewrite is cheaper).
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "python"), str(ROOT / "tests")]

import etrt  # noqa: E402
from conan_consumer import build_consumer  # noqa: E402

# (arms' channels, output channels, pixels per side, kernel): SqueezeNet 1.1's readers of a
# concatenation (expand1x1 and expand3x3 arms of equal width).
READERS = [
    (64, 16, 55, 1),
    (64, 32, 27, 1),
    (128, 32, 27, 1),
    (128, 48, 13, 1),
    (192, 48, 13, 1),
    (192, 64, 13, 1),
    (256, 64, 13, 1),
    (256, 1000, 13, 1),  # the classifier
]


class Split(nn.Module):
    def __init__(self, conv: nn.Conv2d) -> None:
        super().__init__()
        self.conv = conv

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return self.conv(torch.cat([F.relu(a), F.relu(b)], dim=1))


class Joined(nn.Module):
    def __init__(self, conv: nn.Conv2d, passes: int) -> None:
        super().__init__()
        self.conv, self.passes = conv, passes

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = F.relu(x)
        for _ in range(self.passes - 1):  # a multiply XNNPACK cannot fold away: one more pass
            x = x * 1.5
        return self.conv(x)


def median_us(runner: Path, program: Path, inputs: Path, runs: int) -> float:
    proc = subprocess.run(
        [str(runner), str(program), "--inputs", str(inputs), "--repeat", str(runs),
         "--threads", "1"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    found = re.search(r"median_us=([0-9.]+)", proc.stdout)
    if proc.returncode != 0 or not found:
        raise SystemExit(f"{program.name} failed: {proc.stdout}{proc.stderr}")
    return float(found.group(1))


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--build-dir", type=Path, help="an in-tree build whose etrt_runner to use")
    args = parser.parse_args()
    torch.manual_seed(0)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        if args.build_dir is not None:
            runner = args.build_dir / "tools" / "etrt_runner"
        else:
            runner = (
                build_consumer(ROOT / "tests" / "apps" / "runner", work / "r")
                / "etrt_runner_xnnpack"
            )
        print(f"{'reader':<26}{'split us':>10}{'joined us':>11}{'copy us':>9}"
              f"{'split-joined':>14}{'saved vs copy':>15}")  # fmt: skip
        totals = [0.0, 0.0, 0.0]
        for arm, out, side, k in READERS:
            conv = nn.Conv2d(2 * arm, out, k).eval()
            a, b = torch.randn(1, arm, side, side), torch.randn(1, arm, side, side)
            x = torch.cat([a, b], dim=1)
            programs = {
                "split": (Split(conv), (a, b)),
                "joined": (Joined(conv, 1), (x,)),
                "copy": (Joined(conv, 2), (x,)),
            }
            paths = {}
            for key, (model, inputs) in programs.items():
                program = etrt.export(model, inputs, backend="xnnpack-all")
                assert program.info.instruction_ops == ["delegate:XnnpackBackend"], key
                paths[key] = (program.save(work / f"{key}.etrt"), work / f"{key}.bin")
                paths[key][1].write_bytes(b"".join(t.numpy().tobytes() for t in inputs))
            best = {key: float("inf") for key in programs}
            for _ in range(max(1, args.rounds)):
                for key, (path, inputs_bin) in paths.items():
                    best[key] = min(best[key], median_us(runner, path, inputs_bin, args.runs))
            copy = best["copy"] - best["joined"]
            row = (best["split"], best["joined"], copy)
            totals = [t + v for t, v in zip(totals, row, strict=True)]
            label = f"{2 * arm}->{out} {k}x{k} @{side}x{side}"
            saved = row[1] + row[2] - row[0]
            print(f"{label:<26}{row[0]:>10.1f}{row[1]:>11.1f}{row[2]:>9.1f}"
                  f"{row[0] - row[1]:>14.1f}{saved:>15.1f}", flush=True)  # fmt: skip
        split, joined, copy = totals
        print(f"{'total':<26}{split:>10.1f}{joined:>11.1f}{copy:>9.1f}"
              f"{split - joined:>14.1f}{joined + copy - split:>15.1f}")  # fmt: skip


if __name__ == "__main__":
    main()
