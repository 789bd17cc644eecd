"""Run inside a venv holding the etrt and etrt-customop wheels: exports a model using
mylib::scaled_relu, runs it on etrt with the plugin's kernel, and prints one JSON line: the
outputs' agreement with eager PyTorch, the libetrt.so files mapped, the registry's view."""

import json
import sys

import etrt
import etrt.runtime
import etrt_customop
import numpy as np
import torch

op = etrt_customop.define_torch_op()


class Model(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(8, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return op(self.linear(x), 0.5)


torch.manual_seed(0)
model = Model().eval()
x = torch.randn(3, 8)
program = etrt.export(model, (x,), allow_missing_ops=True)
program.save(sys.argv[1])
etrt_customop.load()
(out,) = etrt.load(sys.argv[1]).forward(x.numpy())
want = model(x).detach().numpy()
with open("/proc/self/maps") as f:
    maps = {ln.split()[-1] for ln in f if ln.rstrip().endswith("/libetrt.so")}
print(json.dumps({
    "max_abs_diff": float(np.abs(np.asarray(out) - want).max()),
    "libetrt": sorted(maps),
    "registered": etrt_customop.OP in etrt.runtime.registered_kernels(),
    "runtime_version": etrt.runtime.runtime_version(),
}))
