"""A YOLOv8n-shaped detector written from the published architecture (no weights, nothing
downloaded): convolution + batch norm + SiLU blocks, C2f (a channel split, bottlenecks with
residuals after their activations, a concatenation of every piece), SPPF (three chained max
poolings joined), a neck of nearest upsampling and concatenations, and three heads whose
outputs are flattened and joined. The channels-last tests and the layout notes use it as the
shape of the most deployed CNN family; `width` scales every layer (16 is YOLOv8n's)."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


class ConvBnSilu(nn.Module):
    def __init__(self, c_in: int, c_out: int, k: int = 1, stride: int = 1) -> None:
        super().__init__()
        self.conv = nn.Conv2d(c_in, c_out, k, stride, k // 2, bias=False)
        self.bn = nn.BatchNorm2d(c_out)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.silu(self.bn(self.conv(x)))


class Bottleneck(nn.Module):
    def __init__(self, c: int, shortcut: bool) -> None:
        super().__init__()
        self.cv1, self.cv2, self.shortcut = ConvBnSilu(c, c, 3), ConvBnSilu(c, c, 3), shortcut

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.cv2(self.cv1(x))
        return x + y if self.shortcut else y


class C2f(nn.Module):
    def __init__(self, c_in: int, c_out: int, n: int, shortcut: bool) -> None:
        super().__init__()
        self.c = c_out // 2
        self.cv1 = ConvBnSilu(c_in, 2 * self.c)
        self.cv2 = ConvBnSilu((2 + n) * self.c, c_out)
        self.m = nn.ModuleList(Bottleneck(self.c, shortcut) for _ in range(n))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = list(self.cv1(x).chunk(2, 1))
        y.extend(m(y[-1]) for m in self.m)
        return self.cv2(torch.cat(y, 1))


class SPPF(nn.Module):
    def __init__(self, c_in: int, c_out: int) -> None:
        super().__init__()
        self.cv1, self.cv2 = ConvBnSilu(c_in, c_in // 2), ConvBnSilu(c_in // 2 * 4, c_out)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = [self.cv1(x)]
        y.extend(F.max_pool2d(y[-1], 5, 1, 2) for _ in range(3))
        return self.cv2(torch.cat(y, 1))


class YoloV8Shaped(nn.Module):
    def __init__(self, width: int = 16, outputs: int = 144) -> None:
        super().__init__()
        w = width
        self.stem = nn.Sequential(
            ConvBnSilu(3, w, 3, 2), ConvBnSilu(w, 2 * w, 3, 2), C2f(2 * w, 2 * w, 1, True)
        )
        self.p3 = nn.Sequential(ConvBnSilu(2 * w, 4 * w, 3, 2), C2f(4 * w, 4 * w, 2, True))
        self.p4 = nn.Sequential(ConvBnSilu(4 * w, 8 * w, 3, 2), C2f(8 * w, 8 * w, 2, True))
        self.p5 = nn.Sequential(
            ConvBnSilu(8 * w, 16 * w, 3, 2), C2f(16 * w, 16 * w, 1, True), SPPF(16 * w, 16 * w)
        )
        self.up4, self.up3 = C2f(24 * w, 8 * w, 1, False), C2f(12 * w, 4 * w, 1, False)
        self.down3, self.out4 = ConvBnSilu(4 * w, 4 * w, 3, 2), C2f(12 * w, 8 * w, 1, False)
        self.down4, self.out5 = ConvBnSilu(8 * w, 8 * w, 3, 2), C2f(24 * w, 16 * w, 1, False)
        self.heads = nn.ModuleList(
            nn.Sequential(
                ConvBnSilu(c, 4 * w, 3), ConvBnSilu(4 * w, 4 * w, 3), nn.Conv2d(4 * w, outputs, 1)
            )
            for c in (4 * w, 8 * w, 16 * w)
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        p3 = self.p3(self.stem(x))
        p4 = self.p4(p3)
        p5 = self.p5(p4)
        n4 = self.up4(torch.cat([F.interpolate(p5, scale_factor=2.0), p4], 1))
        n3 = self.up3(torch.cat([F.interpolate(n4, scale_factor=2.0), p3], 1))
        o4 = self.out4(torch.cat([self.down3(n3), n4], 1))
        o5 = self.out5(torch.cat([self.down4(o4), p5], 1))
        return torch.cat(
            [h(t).flatten(2) for h, t in zip(self.heads, (n3, o4, o5), strict=True)], 2
        )


def live(model: nn.Module) -> nn.Module:
    """Eval mode with batch-norm statistics of their own (not the identity)."""
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.running_mean.uniform_(-0.2, 0.2)
                m.running_var.uniform_(0.5, 1.5)
    return model.eval()
