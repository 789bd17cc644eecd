"""What n threads can gain on this machine at all: the same fixed work on 1, 2, 4, ... threads
at once, each pinned to a CPU of its own, as their summed throughput over one thread's.

    python benchmarks/core_ceiling.py [--threads 1 2 ...] [--seconds 1.5] [--rounds 3]

Two kinds of work, the two a model's kernels are bound by:
- fma: independent 256-bit FMAs on registers (x86-64 with FMA; elsewhere a vector loop the
  compiler keeps in registers), no memory: the convolutions' and GEMMs' inner loops. A machine
  whose cores slow down together (a lower all-core clock, a hypervisor's CPUs that share a
  physical core) shows it here as a speed-up under n.
- stream: each thread sums a buffer of its own four times the size of the last-level cache:
  memory bandwidth, what a classifier's weights or a large copy are bound by.

The speed-up is the ceiling of any system's parallel efficiency for that kind of work here: a
model bound by FMAs cannot reach more than the fma column, whatever its kernels do. Prints a
table; each figure the best of --rounds. Compiles its C program with the system's `cc`.
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import tempfile
from pathlib import Path

_SOURCE = r"""
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

typedef struct { int cpu; int kind; long iters; size_t bytes; double seconds; double sink; } Job;
static pthread_barrier_t start;

static double fma_loop(long n) {
#if defined(__x86_64__) && defined(__FMA__)
  __asm__ volatile(
      "vxorps %%ymm0,%%ymm0,%%ymm0\n vxorps %%ymm1,%%ymm1,%%ymm1\n vxorps %%ymm2,%%ymm2,%%ymm2\n"
      "vxorps %%ymm3,%%ymm3,%%ymm3\n vxorps %%ymm4,%%ymm4,%%ymm4\n vxorps %%ymm5,%%ymm5,%%ymm5\n"
      "vxorps %%ymm6,%%ymm6,%%ymm6\n vxorps %%ymm7,%%ymm7,%%ymm7\n vxorps %%ymm8,%%ymm8,%%ymm8\n"
      "vxorps %%ymm9,%%ymm9,%%ymm9\n vxorps %%ymm14,%%ymm14,%%ymm14\n"
      "vxorps %%ymm15,%%ymm15,%%ymm15\n"
      "1:\n"
      "vfmadd231ps %%ymm14,%%ymm15,%%ymm0\n vfmadd231ps %%ymm14,%%ymm15,%%ymm1\n"
      "vfmadd231ps %%ymm14,%%ymm15,%%ymm2\n vfmadd231ps %%ymm14,%%ymm15,%%ymm3\n"
      "vfmadd231ps %%ymm14,%%ymm15,%%ymm4\n vfmadd231ps %%ymm14,%%ymm15,%%ymm5\n"
      "vfmadd231ps %%ymm14,%%ymm15,%%ymm6\n vfmadd231ps %%ymm14,%%ymm15,%%ymm7\n"
      "vfmadd231ps %%ymm14,%%ymm15,%%ymm8\n vfmadd231ps %%ymm14,%%ymm15,%%ymm9\n"
      "dec %0\n jnz 1b\n"
      : "+r"(n)::"xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9",
        "xmm14", "xmm15");
  return 0.0;
#else
  typedef float v8 __attribute__((vector_size(32)));
  v8 a[10] = {{0}}, b = {1, 1, 1, 1, 1, 1, 1, 1};
  v8 c = {1e-9f, 1e-9f, 1e-9f, 1e-9f, 1e-9f, 1e-9f, 1e-9f, 1e-9f};
  for (long i = 0; i < n; ++i)
    for (int k = 0; k < 10; ++k) a[k] = a[k] * b + c;
  double s = 0;
  for (int k = 0; k < 10; ++k) s += a[k][0];
  return s;
#endif
}

static double stream_loop(const double* p, size_t n, long passes) {
  double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  for (long r = 0; r < passes; ++r)
    for (size_t i = 0; i < n; i += 4) {
      s0 += p[i]; s1 += p[i + 1]; s2 += p[i + 2]; s3 += p[i + 3];
    }
  return s0 + s1 + s2 + s3;
}

static void* worker(void* arg) {
  Job* j = arg;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(j->cpu, &set);
  pthread_setaffinity_np(pthread_self(), sizeof set, &set);
  double* buf = NULL;
  size_t n = j->bytes / sizeof(double);
  if (j->kind == 1) {
    buf = malloc(j->bytes);
    for (size_t i = 0; i < n; ++i) buf[i] = (double)(i & 7);  /* first touch on this CPU */
  }
  pthread_barrier_wait(&start);
  double t0 = now();
  j->sink = j->kind == 0 ? fma_loop(j->iters) : stream_loop(buf, n, j->iters);
  j->seconds = now() - t0;
  free(buf);
  return NULL;
}

/* argv: kind (0 fma, 1 stream) iters bytes cpu... ; prints each thread's seconds */
int main(int argc, char** argv) {
  int kind = atoi(argv[1]);
  long iters = atol(argv[2]);
  size_t bytes = (size_t)atoll(argv[3]);
  int threads = argc - 4;
  Job* jobs = calloc(threads, sizeof(Job));
  pthread_t* ids = calloc(threads, sizeof(pthread_t));
  pthread_barrier_init(&start, NULL, threads);
  for (int i = 0; i < threads; ++i) {
    jobs[i] = (Job){atoi(argv[4 + i]), kind, iters, bytes, 0, 0};
    pthread_create(&ids[i], NULL, worker, &jobs[i]);
  }
  for (int i = 0; i < threads; ++i) pthread_join(ids[i], NULL);
  for (int i = 0; i < threads; ++i) printf("%.6f %g\n", jobs[i].seconds, jobs[i].sink);
  return 0;
}
"""


def _llc_bytes() -> int:
    for name in ("SC_LEVEL3_CACHE_SIZE", "SC_LEVEL2_CACHE_SIZE"):
        try:
            size = os.sysconf(name)
        except (ValueError, OSError):
            continue
        if size > 0:
            return size
    return 32 << 20


def _build(tmp: Path) -> Path:
    src, exe = tmp / "ceiling.c", tmp / "ceiling"
    src.write_text(_SOURCE)
    flags = ["-mavx2", "-mfma"] if platform.machine() in ("x86_64", "AMD64") else []
    subprocess.run(["cc", "-O2", *flags, str(src), "-o", str(exe), "-pthread"], check=True)
    return exe


def _run(exe: Path, kind: int, iters: int, nbytes: int, cpus: list[int]) -> list[float]:
    out = subprocess.run(
        [str(exe), str(kind), str(iters), str(nbytes), *map(str, cpus)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return [float(line.split()[0]) for line in out.splitlines()]


def _calibrate(exe: Path, kind: int, nbytes: int, cpu: int, seconds: float) -> int:
    """Iterations (FMA loop trips or passes over the buffer) that take about `seconds` alone."""
    iters = 1_000_000 if kind == 0 else 1
    while True:
        took = _run(exe, kind, iters, nbytes, [cpu])[0]
        if took >= seconds / 4:
            return max(1, round(iters * seconds / took))
        iters *= 4


def main(argv: list[str] | None = None) -> int:
    cpus = sorted(os.sched_getaffinity(0))
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, nargs="+", help="default: 1, 2, 4, ... the CPUs")
    parser.add_argument("--seconds", type=float, default=1.5, help="each run's length alone")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    counts = args.threads or sorted({*(1 << i for i in range(len(cpus).bit_length())), len(cpus)})
    counts = [n for n in counts if 1 <= n <= len(cpus)]
    if not counts or counts[0] != 1:
        counts = [1, *counts]
    nbytes = 4 * _llc_bytes()
    with tempfile.TemporaryDirectory(prefix="etrt-ceiling-") as tmp:
        exe = _build(Path(tmp))
        print(
            f"{len(cpus)} CPUs to use; stream buffers {nbytes >> 20} MiB a thread "
            f"(4x the last-level cache); best of {args.rounds}"
        )
        print("| work | threads | per thread, of one alone | speed-up | efficiency |")
        print("| --- | ---: | ---: | ---: | ---: |")
        for kind, name in ((0, "fma"), (1, "stream")):
            iters = _calibrate(exe, kind, nbytes, cpus[0], args.seconds)
            alone = 0.0
            for n in counts:
                # The slowest thread ends the parallel region: its time is the run's.
                worst = min(
                    max(_run(exe, kind, iters, nbytes, cpus[:n])) for _ in range(args.rounds)
                )
                alone = alone or worst  # counts[0] is 1
                speedup = n * alone / worst
                print(f"| {name} | {n} | {alone / worst:.2f} | {speedup:.2f} | {speedup / n:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
