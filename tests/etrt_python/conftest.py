from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import runtime_build
from etrt_fixtures import (  # noqa: F401
    etrt_wheel,
    exported_program,
    soak_programs,
    tool_runner,
)


@pytest.fixture(scope="session")
def inprocess_runtime() -> Iterator[Path]:
    """etrt's libraries from the in-tree release build (build/runtime), for the ctypes binding
    in this process (etrt.load): the directory they are loaded from."""
    build = runtime_build.build_tools(
        "runtime", ["etrt", "etrt_kernels_optimized", "etrt_threadpool"]
    )
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setenv("ETRT_LIBRARY_DIR", str(build.build_dir))
        yield build.build_dir
