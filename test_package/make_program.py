"""Writes test_package/linear_relu.etrt: relu(W x + b) with W, b given by formulas that
main.cpp recomputes, so the consumer test checks real numbers without Python.

    python test_package/make_program.py
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "python"))

import etrt  # noqa: E402

IN, OUT = 4, 3


def model() -> torch.nn.Module:
    m = torch.nn.Sequential(torch.nn.Linear(IN, OUT), torch.nn.ReLU())
    with torch.no_grad():
        for i in range(OUT):
            m[0].bias[i] = 0.01 * i - 0.02
            for j in range(IN):
                m[0].weight[i, j] = 0.1 * (i + 1) - 0.05 * j
    return m.eval()


def program_bytes() -> bytes:
    return etrt.export(model(), (torch.zeros(1, IN),)).to_bytes()


if __name__ == "__main__":
    (HERE / "linear_relu.etrt").write_bytes(program_bytes())
