"""Run in the consumer venv: PROGRAM INPUTS.bin OUT.npy -> runs the program through the etrt
probe extension (numpy in, numpy out), saves output 0, prints one JSON line."""

from __future__ import annotations

import json
import sys

import ecosystem_probe as probe
import numpy as np

program, inputs, out = sys.argv[1:4]
outputs = probe.run(program, [np.fromfile(inputs, dtype=np.float32)])
np.save(out, outputs[0])
print(
    json.dumps(
        {
            "shapes": [list(o.shape) for o in outputs],
            "kernels": probe.kernels(),
            "loaded": probe.loaded(),
        }
    )
)
