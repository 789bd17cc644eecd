"""Builds the runtime's command-line tools for tests (reused when up to date), and runs exported
modules through etrt_runner."""

from __future__ import annotations

import hashlib
import marshal
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import etrt
import numpy as np
import prebuild
import torch

REPO_ROOT = Path(__file__).resolve().parents[1]

# The libraries the Python binding loads (runtime, kernels, thread pool, XNNPACK delegate).
LIBRARIES = ["etrt", "etrt_kernels_optimized", "etrt_threadpool", "etrt_backend_xnnpack"]

SANITIZER_ENV = {
    # Huge (malformed) allocations must come back as null, not abort the process.
    "ASAN_OPTIONS": "allocator_may_return_null=1:detect_leaks=1:abort_on_error=0:exitcode=66",
    "UBSAN_OPTIONS": "print_stacktrace=1:halt_on_error=1:exitcode=67",
}


@dataclass(frozen=True)
class Tools:
    build_dir: Path

    @property
    def load_check(self) -> Path:
        return self.build_dir / "tools" / "etrt_load_check"

    @property
    def runner(self) -> Path:
        return self.build_dir / "tools" / "etrt_runner"

    @property
    def selftest(self) -> Path:
        return self.build_dir / "tools" / "etrt_runtime_selftest"


def build_tools(name: str, targets: list[str], sanitize: str = "") -> Tools:
    """Configures build/<name> once and builds `targets` with ninja -j2. Every build defines the
    tools and the test programs (tests/cpp, the concurrency stress app), so the C++ unit tests
    and the tool tests of one flavour share one build of the libraries; only what a test asks
    for is built."""
    build_dir = REPO_ROOT / "build" / name
    build_dir.mkdir(parents=True, exist_ok=True)
    # One build at a time per directory: ci/test.sh pre-builds in the background.
    with (build_dir / ".lock").open("w") as lock:
        prebuild.wait_for(lock)
        return _build_locked(build_dir, targets, sanitize)


def _build_locked(build_dir: Path, targets: list[str], sanitize: str) -> Tools:
    cache = build_dir / "CMakeCache.txt"
    configured = (build_dir / "build.ninja").exists() and cache.exists()
    if not configured or "ETRT_BUILD_TESTS:BOOL=ON" not in cache.read_text():
        subprocess.run(
            [
                "cmake",
                "-S",
                str(REPO_ROOT),
                "-B",
                str(build_dir),
                "-G",
                "Ninja",
                "-DETRT_BUILD_TOOLS=ON",
                "-DCMAKE_BUILD_TYPE=" + ("RelWithDebInfo" if sanitize else "Release"),
                f"-DETRT_SANITIZE={sanitize}",
                "-DETRT_BUILD_TESTS=ON",
                *_compiler_cache(sanitize),
            ],
            check=True,
            capture_output=True,
            text=True,
        )
    result = subprocess.run(
        ["ninja", "-C", str(build_dir), "-j2", *targets], capture_output=True, text=True
    )
    assert result.returncode == 0, f"building {targets} failed:\n{result.stdout}\n{result.stderr}"
    return Tools(build_dir)


def _compiler_cache(sanitize: str) -> list[str]:
    """The release build compiles through ccache where ci/ccache.conf is in force (ci/env.sh):
    the libraries then come from what `conan create` compiled (ci/build.sh)."""
    if sanitize or not os.environ.get("CCACHE_CONFIGPATH") or not shutil.which("ccache"):
        return []
    return ["-DCMAKE_CXX_COMPILER_LAUNCHER=ccache"]


def asan_build(targets: list[str]) -> Tools:
    """build/fuzz: the runtime, kernels, pool and XNNPACK delegate under AddressSanitizer and
    UBSan (clang; run its programs with SANITIZER_ENV). The fuzzers' build, so the libraries
    are compiled under the sanitizers once (tools/fuzz/build.sh)."""
    build_dir = REPO_ROOT / "build" / "fuzz"
    prebuild.wait_until_free(build_dir)
    result = subprocess.run(
        ["bash", str(REPO_ROOT / "tools" / "fuzz" / "build.sh"), str(build_dir), *targets],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, f"building {targets} failed:\n{result.stdout}\n{result.stderr}"
    return Tools(build_dir)


def tsan_build(targets: list[str]) -> Path:
    """build/tsan: the runtime, kernels, pool and XNNPACK delegate under ThreadSanitizer."""
    return build_tools("tsan", targets, sanitize="thread").build_dir


# Every report fails the run; no suppressions. Accesses that Debian's uninstrumented XNNPACK
# and pthreadpool make through intercepted calls (memcpy) are outside what TSan can judge: it
# cannot see the atomics those libraries synchronise with.
TSAN_OPTIONS = (
    "halt_on_error=1 exitcode=66 second_deadlock_stack=1 ignore_noninstrumented_modules=1"
)


def libtsan() -> Path:
    """The ThreadSanitizer runtime the compiler links, to preload into Python."""
    path = subprocess.run(
        ["g++", "-print-file-name=libtsan.so"], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert os.path.isabs(path), f"g++ has no libtsan.so (got {path!r}): install libtsan"
    return Path(path).resolve()


def sanitizer_env() -> dict[str, str]:
    env = dict(os.environ)
    env.update(SANITIZER_ENV)
    return env


def _fingerprint(value: Any, digest: Any) -> None:
    """Feeds what a program is exported from into `digest`: module classes and their forward
    code, plain attributes, functions' code (the lambdas of models.Fn), every tensor's bytes."""
    if isinstance(value, torch.Tensor):
        t = value.detach().contiguous()
        digest.update(f"T{t.dtype}{tuple(t.shape)}".encode())
        digest.update(t.view(-1).view(torch.uint8).numpy().tobytes() if t.numel() else b"")
    elif isinstance(value, torch.nn.Module):
        for name, module in value.named_modules():
            cls = type(module)
            digest.update(f"M{name}:{cls.__module__}.{cls.__qualname__}".encode())
            digest.update(marshal.dumps(cls.forward.__code__))
            for key, attr in sorted(vars(module).items()):
                if key not in ("_parameters", "_buffers", "_modules") and not key.startswith("_"):
                    digest.update(key.encode())
                    _fingerprint(attr, digest)
        for name, tensor in value.state_dict(keep_vars=True).items():
            digest.update(name.encode())
            _fingerprint(tensor, digest)
    elif callable(value) and hasattr(value, "__code__"):
        digest.update(marshal.dumps(value.__code__))
        for cell in value.__closure__ or ():
            _fingerprint(cell.cell_contents, digest)
    elif isinstance(value, list | tuple):
        digest.update(f"L{len(value)}".encode())
        for item in value:
            _fingerprint(item, digest)
    else:
        digest.update(repr(value).encode())


_EXPORTS: dict[str, etrt.Program] = {}


def cached_export(
    module: torch.nn.Module, inputs: tuple[torch.Tensor, ...], **options: Any
) -> etrt.Program:
    """etrt.export, once per content within a run: the release and the ASan runner of a test
    export the same model, and only the first pays for it."""
    digest = hashlib.sha256()
    _fingerprint(module, digest)
    _fingerprint(inputs, digest)
    _fingerprint(sorted(options.items()), digest)
    key = digest.hexdigest()
    if key not in _EXPORTS:
        _EXPORTS[key] = etrt.export(module, inputs, **options)
    return _EXPORTS[key]


@dataclass(frozen=True)
class ExportedRun:
    program: etrt.Program
    got: list[np.ndarray]  # the runner's outputs
    expected: list[np.ndarray]  # eager PyTorch's

    def max_abs_diff(self, i: int = 0) -> float:
        """Largest |got - expected|; equal values (infinities too) count as 0."""
        got, want = self.got[i].astype(np.float64), self.expected[i].astype(np.float64)
        with np.errstate(invalid="ignore"):
            diff = np.where(got == want, 0.0, np.abs(got - want))
        return float(np.max(diff)) if diff.size else 0.0


@dataclass(frozen=True)
class ToolRunner:
    """etrt_runner of one in-tree build; `env` carries the sanitizer options when it has them."""

    exe: Path
    env: dict[str, str] | None

    def run_exported(
        self,
        workdir: Path,
        module: torch.nn.Module,
        inputs: tuple[torch.Tensor, ...],
        external_constants: bool = False,
        backend: str | None = None,
    ) -> ExportedRun:
        """Exports `module`, runs the program on `inputs` and pairs its outputs with eager's.
        With external_constants, the weights go through a .ptd passed with --data."""
        program = cached_export(
            module, inputs, external_constants=external_constants, backend=backend
        )
        path, in_bin, out_bin = workdir / "m.etrt", workdir / "in.bin", workdir / "out.bin"
        program.save(path)
        data = ["--data", str(program.save_data(workdir / "m.ptd"))] if external_constants else []
        in_bin.write_bytes(b"".join(t.contiguous().numpy().tobytes() for t in inputs))
        proc = subprocess.run(
            [str(self.exe), str(path), *data, "--inputs", str(in_bin), "--outputs", str(out_bin)],
            capture_output=True, text=True, timeout=300, env=self.env,
        )  # fmt: skip
        assert "Sanitizer" not in proc.stderr and "runtime error" not in proc.stderr, proc.stderr
        assert proc.returncode == 0, proc.stderr
        with torch.no_grad():
            eager = module(*inputs)
        expected = [t.numpy() for t in (eager if isinstance(eager, tuple) else (eager,))]
        raw, got = out_bin.read_bytes(), []
        for e in expected:
            got.append(np.frombuffer(raw[: e.nbytes], dtype=e.dtype).reshape(e.shape))
            raw = raw[e.nbytes :]
        assert raw == b"", "the program has more outputs than eager"
        return ExportedRun(program, got, expected)


def tool_runner(flavor: str) -> ToolRunner:
    """ "release" (build/runtime) or "asan" (build/asan, AddressSanitizer and UBSan)."""
    if flavor == "release":
        return ToolRunner(build_tools("runtime", ["etrt_runner"]).runner, None)
    return ToolRunner(asan_build(["etrt_runner"]).runner, sanitizer_env())


def python_runtime() -> Tools:
    """The in-tree release build's libraries (runtime, kernels, thread pool, XNNPACK delegate)
    for the ctypes binding of this process, and its etrt_runner. Call it before anything loads
    the runtime: the binding loads from ETRT_LIBRARY_DIR once per process."""
    tools = build_tools("runtime", [*LIBRARIES, "etrt_runner"])
    os.environ["ETRT_LIBRARY_DIR"] = str(tools.build_dir)
    return tools


# What the gate's ThreadSanitizer tests build (the Python binding's libraries and the C++
# stress, soak and C ABI programs), pre-built so that no test compiles them on its own time.
TSAN_TARGETS = [*LIBRARIES, "concurrency_stress", "etrt_soak", "c_api_free_race"]


def _prebuild(which: list[str]) -> None:
    if "release" in which:
        build_tools("runtime", ["all"])
    if "asan" in which:
        asan_build(["all"])
        subprocess.run(["bash", str(REPO_ROOT / "tools" / "fuzz" / "build.sh")], check=True)
    if "tsan" in which:
        # Needed later in the run than the ASan build (started beside it), so below it.
        os.nice(5)
        tsan_build(TSAN_TARGETS)


if __name__ == "__main__":
    # ci/test.sh runs this in the background (niced), the tests then find each build done (or
    # wait for it, never race it): `asan` (the ASan+UBSan build and the fuzzers' seeds, exports
    # of real models) from the start, beside the package's build; `release` once the package is
    # built (its objects are compiler-cache hits of the package's), then `tsan`, niced further.
    # No argument: all three.
    which = sys.argv[1:] or ["release", "asan", "tsan"]
    with prebuild.Group():  # its compilers in it: a test waiting for it raises them all
        _prebuild(which)
