"""Publishing the wheel atomically: the output dir gains the whole file or stays unchanged."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from pathlib import Path

from etpkg._internal.errors import OutputError


def publish(wheel: Path, out_dir: Path) -> Path:
    """Copies wheel into out_dir via a temp file + os.replace; on failure undoes everything."""
    dest = out_dir / wheel.name
    created: list[Path] = []
    tmp: str | None = None
    try:
        missing: list[Path] = []
        d = out_dir
        while not d.exists() and not d.is_symlink():
            missing.append(d)
            d = d.parent
        for d in reversed(missing):
            d.mkdir()
            created.append(d)
        if not out_dir.is_dir():
            raise NotADirectoryError(20, "not a directory", str(out_dir))
        fd, tmp = tempfile.mkstemp(prefix=f".{wheel.name}.", suffix=".tmp", dir=out_dir)
        with os.fdopen(fd, "wb") as f, wheel.open("rb") as src:
            shutil.copyfileobj(src, f)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, dest)
        tmp = None
    except BaseException as exc:  # an interrupt too: out_dir stays as it was
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        for d in reversed(created):
            with contextlib.suppress(OSError):
                d.rmdir()
        if isinstance(exc, OSError):
            reason = exc.strerror or str(exc)
            raise OutputError(f"cannot write {dest}: {reason}") from exc
        raise
    return dest
