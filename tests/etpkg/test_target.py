"""target.py: a foreign host's files come from its own compiler and C library, never this
machine's; a missing cross compiler or emulator is named with the package that brings it."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from etpkg._internal import target
from etpkg._internal.errors import ToolError
from etpkg._internal.verify.runner import CheckFailed, elf_arch, emulated


def _fake_compiler(bin_dir: Path, name: str, libc: Path, libdir: Path) -> None:
    script = bin_dir / name
    script.write_text(
        "#!/bin/sh\n"
        f'case "$1" in -print-file-name=libc.so.6) echo {libc};;\n'
        f"  -print-search-dirs) echo 'libraries: ={libdir}/:/nonexistent/';;\n"
        "  *) exit 1;; esac\n"
    )
    script.chmod(0o755)


def test_host_glibc_and_library_dirs_come_from_the_hosts_compiler_and_libc(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sysroot = tmp_path / "sysroot"
    (sysroot / "lib").mkdir(parents=True)
    libc = sysroot / "lib" / "libc.so.6"
    # The banner an older glibc prints: not this machine's version.
    libc.write_bytes(b"\x7fELF...GNU C Library stable release version 2.28.\n...GLIBC_2.27\0")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("riscv64-linux-gnu-gcc", "riscv64-linux-gnu-g++"):
        _fake_compiler(bin_dir, name, libc, sysroot / "lib")
    monkeypatch.setenv("PATH", str(bin_dir))
    target.find_host.cache_clear()
    host = target.find_host("riscv64")
    assert host.glibc == "2.28"
    assert host.sysroot == sysroot.resolve()
    assert host.library_dirs == ((sysroot / "lib").resolve(),)
    assert host.emulator() is None  # no qemu-riscv64 on this PATH
    target.find_host.cache_clear()


def test_glibc_version_falls_back_to_the_newest_version_node(tmp_path: Path) -> None:
    libc = tmp_path / "libc.so.6"
    libc.write_bytes(b"GLIBC_2.17\0GLIBC_2.34\0GLIBC_2.4\0")
    assert target.glibc_version(libc) == "2.34"


def test_a_missing_cross_compiler_names_the_debian_package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    target.find_host.cache_clear()
    with pytest.raises(ToolError, match=r"apt-get install g\+\+-aarch64-linux-gnu"):
        target.find_host("aarch64")
    target.find_host.cache_clear()


def test_an_aarch64_program_without_qemu_fails_saying_what_could_not_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gcc = shutil.which("aarch64-linux-gnu-gcc")
    assert gcc is not None, "apt-get install g++-aarch64-linux-gnu (ci/setup.sh installs it)"
    src = tmp_path / "main.c"
    src.write_text("int main(void) { return 0; }\n")
    program = tmp_path / "prog"
    subprocess.run([gcc, str(src), "-o", str(program)], check=True)
    assert elf_arch(program) == "aarch64"
    bin_dir = tmp_path / "bin"  # the cross compilers, and no qemu
    bin_dir.mkdir()
    for name in ("aarch64-linux-gnu-gcc", "aarch64-linux-gnu-g++"):
        found = shutil.which(name)
        assert found is not None
        (bin_dir / name).symlink_to(found)
    monkeypatch.setenv("PATH", str(bin_dir))
    target.find_host.cache_clear()
    with pytest.raises(CheckFailed, match=r"cannot run the aarch64 program prog .*qemu-user"):
        emulated([str(program)])
    target.find_host.cache_clear()
    monkeypatch.undo()
    assert emulated([str(program)])[1:] == ["-L", "/usr/aarch64-linux-gnu", str(program)]
    assert emulated(["/bin/true"]) == ["/bin/true"]  # this machine's program runs as it is


def test_verify_of_an_aarch64_wheel_without_the_cross_compiler_says_what_it_cannot_build(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from etpkg._internal.errors import VerifyError
    from etpkg._internal.verify.workspace import wheel_host

    monkeypatch.setenv("PATH", str(tmp_path))
    target.find_host.cache_clear()
    wheel = tmp_path / "zlib-1.2.13-py3-none-manylinux_2_17_aarch64.whl"
    with pytest.raises(VerifyError, match=r"cannot build the consumers of zlib-1\.2\.13-py3"):
        wheel_host(wheel)
    target.find_host.cache_clear()
    assert (
        wheel_host(tmp_path / f"zlib-1.2.13-py3-none-manylinux_2_17_{target.this_machine()}.whl")
        is None
    )
    assert wheel_host(tmp_path / "x-1.0-py3-none-any.whl") is None
