"""tools/cpuid_cap: the CPUID shim benchmarks/threads.py --cpuid-cap loads into every system's
worker. Where the CPU has AVX-512 and can fault CPUID, a process under it sees an AVX2 CPU from
its first constructor on (C, GCC's __builtin_cpu_supports, torch, etrt), its own SIGSEGV handler
still gets real faults and a real fault without one still ends it; where the CPU has nothing to
hide the shim changes nothing; where it cannot trap it refuses to run."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SHIM = ROOT / "tools" / "cpuid_cap" / "cpuid_cap.c"

# What an AVX2 CPU lacks, per CPUID leaf 7 register (subleaf 0: ebx ecx edx, subleaf 1: eax edx).
HIDDEN = {
    "7.ebx": (16, 17, 21, 26, 27, 28, 30, 31),  # AVX512 F DQ IFMA PF ER CD BW VL
    "7.ecx": (1, 6, 11, 12, 14),  # AVX512 VBMI VBMI2 VNNI BITALG VPOPCNTDQ
    "7.edx": (2, 3, 8, 22, 23, 24, 25),  # 4VNNIW 4FMAPS VP2INTERSECT AMX-BF16 FP16 AMX
    "7.1.eax": (4, 5, 21, 23),  # AVX-VNNI AVX512-BF16 AMX-FP16 AVX-IFMA
    "7.1.edx": (4, 5, 10, 19),  # AVX-VNNI-INT8 AVX-NE-CONVERT AVX-VNNI-INT16 AVX10
}
AVX2_BIT = ("7.ebx", 5)

LIB = r"""
int lib_avx512f;
__attribute__((constructor)) static void init(void) {
  lib_avx512f = __builtin_cpu_supports("avx512f") != 0;
}
"""

PROBE = r"""
#include <cpuid.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
extern int lib_avx512f;
static void own(int sig) {
  (void)sig;
  static const char m[] = "own handler\n";
  write(1, m, sizeof m - 1);
  _exit(3);
}
static void leaf7(const char* when) {
  unsigned a, b, c, d, a1, b1, c1, d1;
  __cpuid_count(7, 0, a, b, c, d);
  __cpuid_count(7, 1, a1, b1, c1, d1);
  printf("%s %x %x %x %x %x\n", when, b, c, d, a1, d1);
  fflush(stdout);
}
int main(int argc, char** argv) {
  printf("constructor %d\n", lib_avx512f);
  leaf7("cpuid");
  if (argc > 1 && strcmp(argv[1], "own") == 0) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = own;
    sigaction(SIGSEGV, &sa, NULL);
    leaf7("after");
  }
  if (argc > 1) *(volatile int*)0 = 1;
  return 0;
}
"""


def _cc(*args: str | Path) -> None:
    subprocess.run(["cc", "-O2", *map(str, args)], check=True)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The shim and a probe program whose library reads the CPU in its constructor."""
    d = tmp_path_factory.mktemp("cpuid_cap")
    shim = d / "cpuid_cap.so"
    _cc("-Wall", "-Werror", "-shared", "-fPIC", SHIM, "-o", shim, "-ldl")
    (d / "lib.c").write_text(LIB)
    (d / "probe.c").write_text(PROBE)
    _cc("-shared", "-fPIC", d / "lib.c", "-o", d / "libprobe.so")
    _cc(d / "probe.c", f"-L{d}", "-lprobe", f"-Wl,-rpath,{d}", "-o", d / "probe")
    return shim, d / "probe"


def _run(cmd: list[str], shim: Path | None, audit: bool = True) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "LD_AUDIT")}
    if shim is not None:
        env["LD_PRELOAD"] = str(shim)
        if audit:
            env["LD_AUDIT"] = str(shim)
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)


def _leaf7(line: str) -> dict[str, int]:
    values = [int(v, 16) for v in line.split()[1:]]
    return dict(zip(HIDDEN, values, strict=True))


def _capped(real: dict[str, int]) -> dict[str, int]:
    return {reg: v & ~sum(1 << b for b in HIDDEN[reg]) for reg, v in real.items()}


def _mode(real: dict[str, int]) -> str:
    if _capped(real) == real:
        return "nothing to hide"
    flags = Path("/proc/cpuinfo").read_text().split()
    return "trap" if "cpuid_fault" in flags else "cannot trap"


def test_the_process_sees_an_avx2_cpu_from_its_first_constructor(built: tuple[Path, Path]) -> None:
    shim, probe = built
    plain = _run([str(probe)], None)
    assert plain.returncode == 0, plain.stderr
    real = _leaf7(plain.stdout.splitlines()[1])
    capped = _run([str(probe)], shim)
    mode = _mode(real)
    if mode == "cannot trap":
        assert capped.returncode == 70
        assert "cpuid_cap: this CPU or kernel cannot make CPUID fault" in capped.stderr
        assert capped.stdout == ""
        return
    assert capped.returncode == 0, capped.stderr
    lines = capped.stdout.splitlines()
    assert lines[0] == "constructor 0"
    assert _leaf7(lines[1]) == _capped(real)
    reg, bit = AVX2_BIT
    assert _leaf7(lines[1])[reg] >> bit & 1 == real[reg] >> bit & 1
    if mode == "nothing to hide":
        assert capped.stdout == plain.stdout
    elif real["7.ebx"] >> 16 & 1:  # AVX-512 F
        assert plain.stdout.splitlines()[0] == "constructor 1"
        # Without LD_AUDIT a library loaded at start-up has read the CPU before the shim.
        late = _run([str(probe)], shim, audit=False)
        assert late.stdout.splitlines() == ["constructor 1", lines[1]]


def test_the_programs_own_handler_keeps_the_trap_and_gets_real_faults(
    built: tuple[Path, Path],
) -> None:
    shim, probe = built
    real = _leaf7(_run([str(probe)], None).stdout.splitlines()[1])
    if _mode(real) == "cannot trap":
        assert _run([str(probe), "own"], shim).returncode == 70
        return
    own = _run([str(probe), "own"], shim)
    assert own.returncode == 3, own.stderr
    lines = own.stdout.splitlines()
    assert lines[1].split()[1:] == lines[2].split()[1:]
    assert _leaf7(lines[2]) == _capped(real)
    assert lines[3] == "own handler"
    crash = _run([str(probe), "crash"], shim)
    assert crash.returncode == -signal.SIGSEGV
    assert _leaf7(crash.stdout.splitlines()[1]) == _capped(real)


def test_torch_and_etrt_take_avx2_under_the_shim(built: tuple[Path, Path]) -> None:
    shim, probe = built
    real = _leaf7(_run([str(probe)], None).stdout.splitlines()[1])
    script = (
        "import torch, etrt.runtime\n"
        "print(torch.backends.cpu.get_cpu_capability())\n"
        "print(etrt.runtime.isa_info().cpu)\n"
    )
    plain = _run([sys.executable, "-c", script], None)
    capped = _run([sys.executable, "-c", script], shim, audit=False)
    assert plain.returncode == 0, plain.stderr
    if _mode(real) == "cannot trap":
        assert capped.returncode == 70
        return
    assert capped.returncode == 0, capped.stderr
    if real["7.ebx"] >> 16 & 1:  # AVX-512 F
        assert plain.stdout.split() == ["AVX512", "avx512"]
    assert capped.stdout.split() == ["AVX2", "avx2"]
