"""The machine a package is built for, when it is not this one (Conan's host context on a
cross build): its C library, the directories its libraries are found in, its compilers, and
the emulator that runs its programs here.

Everything is read from the host's own files, found through its C compiler (Debian's
`aarch64-linux-gnu-gcc` knows where its `libc.so.6` lives), never from this machine's: the
glibc floor of a static package, the libraries auditwheel may graft.
"""

from __future__ import annotations

import functools
import platform
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from etpkg._internal import process
from etpkg._internal.errors import ToolError

# Wheel arch -> GNU triplet of Debian's cross toolchains, and qemu-user's name for it.
_TRIPLETS = {
    "x86_64": "x86_64-linux-gnu",
    "i686": "i686-linux-gnu",
    "aarch64": "aarch64-linux-gnu",
    "ppc64le": "powerpc64le-linux-gnu",
    "s390x": "s390x-linux-gnu",
    "riscv64": "riscv64-linux-gnu",
}
_QEMU = {"i686": "i386"}
# pyelftools e_machine -> wheel arch, for telling a program's machine from this one's.
ELF_MACHINES = {
    "EM_X86_64": "x86_64",
    "EM_386": "i686",
    "EM_AARCH64": "aarch64",
    "EM_PPC64": "ppc64le",
    "EM_S390": "s390x",
    "EM_RISCV": "riscv64",
}


def this_machine() -> str:
    """This machine's arch as wheel tags spell it."""
    machine = platform.machine()
    return {"amd64": "x86_64", "arm64": "aarch64"}.get(machine.lower(), machine)


def is_foreign(arch: str) -> bool:
    """Whether programs of wheel arch `arch` cannot run natively here."""
    return arch != this_machine()


def triplet(arch: str) -> str:
    try:
        return _TRIPLETS[arch]
    except KeyError:
        raise ToolError(f"no cross toolchain is known for {arch}") from None


@dataclass(frozen=True)
class Host:
    """A foreign machine's files, as its C compiler finds them."""

    arch: str  # wheel arch, e.g. "aarch64"
    c_compiler: str  # a command: "aarch64-linux-gnu-gcc"
    cxx_compiler: str
    libc: Path  # its libc.so.6
    library_dirs: tuple[Path, ...]  # where its linker looks, that exist

    @property
    def sysroot(self) -> Path:
        """The prefix whose lib/ holds the C library and the dynamic loader (qemu's -L)."""
        return self.libc.parent.parent

    @property
    def glibc(self) -> str:
        return glibc_version(self.libc)

    def emulator(self) -> list[str] | None:
        """qemu-user's command that runs this host's programs here, or None if not installed."""
        qemu = shutil.which(f"qemu-{_QEMU.get(self.arch, self.arch)}")
        return None if qemu is None else [qemu, "-L", str(self.sysroot)]


def _compiler_output(compiler: str, *args: str) -> str:
    try:
        proc = process.run([compiler, *args])
    except OSError as exc:
        raise ToolError(f"cannot run the host compiler {compiler}: {exc.strerror or exc}") from exc
    if proc.returncode != 0:
        raise ToolError(f"{compiler} {' '.join(args)} failed: {proc.stderr.strip()[-300:]}")
    return proc.stdout.strip()


@functools.cache
def find_host(arch: str, c_compiler: str | None = None, cxx_compiler: str | None = None) -> Host:
    """The host `arch` as its compilers see it: by default Debian's `<triplet>-gcc`/`-g++`."""
    prefix = triplet(arch)
    c = c_compiler or f"{prefix}-gcc"
    cxx = cxx_compiler or f"{prefix}-g++"
    for tool in (c, cxx):
        if shutil.which(tool) is None:
            raise ToolError(
                f"the {arch} compiler {tool} is not on PATH: install the cross toolchain "
                f"(Debian: apt-get install g++-{prefix}); wheelify also takes the host "
                "profile's tools.build:compiler_executables"
            )
    found = _compiler_output(c, "-print-file-name=libc.so.6")
    libc = Path(found).resolve()
    if not Path(found).is_absolute() or not libc.is_file():
        raise ToolError(f"{c} finds no libc.so.6 for {arch} (is its C library installed?)")
    return Host(arch, c, cxx, libc, _library_dirs(c))


def _library_dirs(compiler: str) -> tuple[Path, ...]:
    for line in _compiler_output(compiler, "-print-search-dirs").splitlines():
        if line.startswith("libraries:"):
            entries = line.split(":", 1)[1].strip().lstrip("=").split(":")
            dirs = (Path(e).resolve() for e in entries if e)
            return tuple(dict.fromkeys(d for d in dirs if d.is_dir()))
    raise ToolError(f"{compiler} -print-search-dirs names no library directories")


_RELEASE = re.compile(rb"release version (\d+)\.(\d+)")
_VERSION_NODE = re.compile(rb"GLIBC_(\d+)\.(\d+)")


def glibc_version(libc: Path) -> str:
    """The glibc release of a libc.so.6 of any arch: the banner it prints when run ("...
    release version 2.36."), else the newest GLIBC_x.y version it defines."""
    data = libc.read_bytes()
    match = _RELEASE.search(data)
    if match is not None:
        return f"{int(match.group(1))}.{int(match.group(2))}"
    nodes = [(int(a), int(b)) for a, b in _VERSION_NODE.findall(data)]
    if not nodes:
        raise ToolError(f"{libc} names no glibc version")
    major, minor = max(nodes)
    return f"{major}.{minor}"
