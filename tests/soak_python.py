"""The concurrency soak through the Python binding (tests/apps/soak is its C++/C ABI twin).

    python tests/soak_python.py [--seed S] [--threads N] [--modules M] [--ops K] [--seconds T]
        PROGRAM...

N threads share M module slots and, chosen by a seeded random stream, load a program into a
slot, run it and compare the outputs with a single-threaded reference (one per input size of a
dynamic program, one per run since a reset of a stateful one), reset its state, and close a
module while other threads are calling it (they must then get "module ... is closed", and only
then). Each thread stops after K operations or T seconds. Threads sharing a stateful module
hold its lock for a whole reset-and-runs sequence, as the binding's docs ask of callers whose
calls must not interleave; a stateless one needs no lock (the binding serialises each call).
Prints the figures, then "ok" (exit 0) or "failed" (exit 1).
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import etrt
import numpy as np
from etrt.errors import EtrtError

STATEFUL_RUNS = 3
VARIANTS = 3


@dataclass
class Program:
    path: str
    stateful: bool = False
    dynamic: bool = False
    variants: list[tuple[list[np.ndarray], list[list[np.ndarray]]]] = field(default_factory=list)


def make_inputs(method: Any, v: int) -> list[np.ndarray]:
    """Variant v, as tests/apps/soak makes it: dynamic sizes between the bounds, fixed values."""
    arrays = []
    for i, spec in enumerate(method.inputs):
        shape = tuple(
            lo + (3 * v) % (hi - lo + 1) if spec.dynamic else size
            for lo, hi, size in zip(spec.min_shape, spec.max_shape, spec.shape, strict=True)
        )
        n = math.prod(shape)
        if spec.dtype == np.int64:
            values = (np.arange(n) * 3 + i + v) % 8
        else:
            values = np.sin(0.37 * (np.arange(n) + 11 * i) + v)
        arrays.append(values.astype(spec.dtype).reshape(shape))
    return arrays


def reference(path: str) -> Program:
    program = Program(path)
    with etrt.load(path) as module:
        method = module.method()
        program.stateful = method.num_states > 0
        program.dynamic = any(spec.dynamic for spec in method.inputs)
        for v in range(VARIANTS if program.dynamic else 1):
            inputs = make_inputs(method, v)
            method.reset()
            runs = [
                [np.array(o) for o in method(*inputs)]
                for _ in range(STATEFUL_RUNS if program.stateful else 1)
            ]
            program.variants.append((inputs, runs))
    return program


@dataclass
class Entry:
    program: Program
    module: etrt.Module
    lock: threading.Lock = field(default_factory=threading.Lock)
    closing: bool = False


@dataclass
class Soak:
    programs: list[Program]
    slots: list[Entry | None]
    slots_lock: threading.Lock = field(default_factory=threading.Lock)
    counts: dict[str, int] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)
    counts_lock: threading.Lock = field(default_factory=threading.Lock)

    def count(self, key: str) -> None:
        with self.counts_lock:
            self.counts[key] = self.counts.get(key, 0) + 1

    def fail(self, what: str) -> None:
        with self.counts_lock:
            self.failures.append(what)

    def load(self, rng: random.Random) -> Entry:
        program = rng.choice(self.programs)
        self.count("loads")
        return Entry(program, etrt.load(program.path))

    def close(self, entry: Entry) -> None:
        entry.closing = True
        entry.module.close()  # waits for the calls running on it
        self.count("closes")

    def run(self, entry: Entry, rng: random.Random) -> None:
        inputs, runs = rng.choice(entry.program.variants)
        try:
            if entry.program.stateful:
                with entry.lock:
                    method = entry.module.method()
                    method.reset()
                    self.count("resets")
                    for want in runs:
                        self.check(entry, method(*inputs), want)
            else:
                self.check(entry, entry.module.forward(*inputs), runs[0])
        except EtrtError as exc:
            if "is closed" not in str(exc) or not entry.closing:
                self.fail(f"{entry.program.path}: {exc}")
            else:
                self.count("refused after close")

    def check(self, entry: Entry, got: list[Any], want: list[np.ndarray]) -> None:
        self.count("runs")
        same = len(got) == len(want) and all(
            g.shape == w.shape and np.allclose(g, w, rtol=1e-5, atol=1e-5)
            for g, w in zip(got, want, strict=False)
        )
        if not same:
            self.count("mismatches")
            self.fail(f"{entry.program.path}: outputs differ from the reference")

    def worker(self, seed: int, ops: int, deadline: float) -> None:
        rng = random.Random(seed)
        for _ in range(ops):
            if self.failures or time.monotonic() > deadline:
                return
            self.count("ops")
            s = rng.randrange(len(self.slots))
            op = rng.randrange(100)
            try:
                if op < 8:  # load into the slot, closing what was there
                    fresh = self.load(rng)
                    with self.slots_lock:
                        old, self.slots[s] = self.slots[s], fresh
                    if old is not None:
                        self.close(old)
                elif op < 14:  # close while others may be running it
                    with self.slots_lock:
                        old, self.slots[s] = self.slots[s], None
                    if old is not None:
                        self.close(old)
                else:
                    with self.slots_lock:
                        entry = self.slots[s]
                    if entry is not None:
                        self.run(entry, rng)
            except Exception as exc:  # anything else is a failure, never a crash of the soak
                self.fail(repr(exc))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--modules", type=int, default=3)
    parser.add_argument("--ops", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("programs", nargs="+")
    args = parser.parse_args()
    programs = [reference(p) for p in args.programs]
    rng = random.Random(args.seed)
    soak = Soak(programs, [])
    soak.slots = [soak.load(rng) for _ in range(args.modules)]
    start = time.monotonic()
    threads = [
        threading.Thread(
            target=soak.worker, args=(args.seed * 1000003 + t, args.ops, start + args.seconds)
        )
        for t in range(args.threads)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for entry in soak.slots:
        if entry is not None:
            soak.close(entry)
    took = time.monotonic() - start
    print(
        f"soak-python: seed {args.seed} threads {args.threads} modules {args.modules}"
        f" programs {len(programs)} seconds {took:.1f}"
    )
    print(f"stateful {sum(p.stateful for p in programs)}")
    print(f"dynamic {sum(p.dynamic for p in programs)}")
    for key in ("ops", "runs", "mismatches", "resets", "loads", "closes", "refused after close"):
        print(f"{key} {soak.counts.get(key, 0)}")
    for failure in soak.failures[:20]:
        print(f"FAILED: {failure}", file=sys.stderr)
    print("failed" if soak.failures else "ok")
    return 1 if soak.failures else 0


if __name__ == "__main__":
    sys.exit(main())
