"""Writing and reading wheel archives, canonically: same tree => byte-identical wheel."""

from __future__ import annotations

import os
import stat
import time
import zipfile
from pathlib import Path, PurePosixPath

from wheel.wheelfile import WheelFile  # type: ignore[import-untyped]

from etpkg._internal.build.elf import ELF_MAGIC
from etpkg._internal.errors import LayoutError

DEFAULT_EPOCH = 1767225600  # 2026-01-01; used when SOURCE_DATE_EPOCH is unset
MIN_EPOCH = 315532800  # 1980-01-01, the earliest zip timestamp
COMPRESSION = zipfile.ZIP_DEFLATED


def source_date_epoch() -> int:
    value = os.environ.get("SOURCE_DATE_EPOCH")
    if not value:
        return DEFAULT_EPOCH
    try:
        return max(int(value), MIN_EPOCH)
    except ValueError as exc:
        raise LayoutError(f"SOURCE_DATE_EPOCH={value!r} is not an integer") from exc


def file_mode(data: bytes) -> int:
    """0755 for ELF files and scripts, 0644 for everything else."""
    return 0o755 if data.startswith(ELF_MAGIC) or data.startswith(b"#!") else 0o644


def _zipinfo(name: str, mode: int, epoch: int) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name, date_time=time.gmtime(epoch)[0:6])
    info.compress_type = COMPRESSION
    info.create_system = 3  # Unix, so the mode bits are honoured
    info.external_attr = (stat.S_IFREG | mode) << 16
    return info


class _CanonicalWheelFile(WheelFile):  # type: ignore[misc]
    """WheelFile whose RECORD gets the same fixed timestamp and mode as every other entry."""

    def __init__(self, file: Path, epoch: int) -> None:
        super().__init__(file, "w", compression=COMPRESSION)
        self._epoch = epoch

    def writestr(
        self,
        zinfo_or_arcname: str | zipfile.ZipInfo,
        data: bytes | str,
        compress_type: int | None = None,
    ) -> None:
        if isinstance(zinfo_or_arcname, str):
            zinfo_or_arcname = _zipinfo(zinfo_or_arcname, 0o644, self._epoch)
        super().writestr(zinfo_or_arcname, data, compress_type)


def _order(name: str, dist_info: str) -> tuple[int, str]:
    # Package files first, then dist-info; RECORD is written last by WheelFile itself.
    return (1 if name.startswith(dist_info + "/") else 0, name)


def tree_files(root: Path) -> list[str]:
    """Every regular file under root as a posix relative path; symlinks are refused."""
    names: list[str] = []
    for path in root.rglob("*"):
        if path.is_symlink():
            raise LayoutError(f"wheel tree holds a symlink: {path.relative_to(root)}")
        if path.is_file():
            names.append(PurePosixPath(path.relative_to(root)).as_posix())
    return names


def write_wheel(root: Path, out: Path, dist_info: str) -> None:
    """Packs the tree at root into out; an existing RECORD in the tree is regenerated."""
    epoch = source_date_epoch()
    record = f"{dist_info}/RECORD"
    names = sorted((n for n in tree_files(root) if n != record), key=lambda n: _order(n, dist_info))
    with _CanonicalWheelFile(out, epoch) as whl:
        for name in names:
            data = (root / name).read_bytes()
            whl.writestr(_zipinfo(name, file_mode(data), epoch), data)


def unpack_wheel(wheel: Path, dest: Path) -> None:
    """Extracts a wheel (auditwheel's output); names escaping dest are refused."""
    dest_resolved = dest.resolve()
    with zipfile.ZipFile(wheel) as zf:
        for info in zf.infolist():
            target = (dest / info.filename).resolve()
            if not target.is_relative_to(dest_resolved):
                raise LayoutError(f"{wheel.name}: entry {info.filename!r} escapes the wheel")
            if info.is_dir():
                target.mkdir(parents=True, exist_ok=True)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(zf.read(info))
