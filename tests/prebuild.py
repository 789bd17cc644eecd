"""The gate's background pre-builds (ci/test.sh) and the tests that wait for them: a pre-build
runs niced, in a process group of its own, so that it takes only the CPU the tests leave; a
test that finds one holding the build directory's lock is now waiting for it, so the build is
on the critical path and gets the waiter's priority from then on."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path
from typing import IO

REPO_ROOT = Path(__file__).resolve().parents[1]
GROUPS = REPO_ROOT / "build" / "prebuild-groups"  # one empty file per pre-build's group id


def wait_for(lock: IO[str]) -> None:
    """Takes the lock `lock` is open on, raising the pre-builds' priority first when it is
    held. Best effort: raising a priority needs CAP_SYS_NICE (CI runs as root)."""
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return
    except BlockingIOError:
        pass
    mine = os.getpriority(os.PRIO_PROCESS, 0)
    for group in GROUPS.glob("*"):
        try:
            os.setpriority(os.PRIO_PGRP, int(group.name), mine)
        except (OSError, ValueError):
            pass  # gone, not ours to raise, or not a group id
    fcntl.flock(lock, fcntl.LOCK_EX)


def wait_until_free(build_dir: Path, name: str = ".lock") -> None:
    """For a build a script locks itself (tools/fuzz/build.sh): waits, as wait_for does, until
    nothing holds build_dir/NAME, then lets it go for the script to take."""
    build_dir.mkdir(parents=True, exist_ok=True)
    with (build_dir / name).open("w") as lock:
        wait_for(lock)


class Group:
    """`with Group():` the calling process leads a group the waiters can find, until the end."""

    def __enter__(self) -> Group:
        try:
            os.setpgid(0, 0)
        except OSError:
            pass  # a session leader already leads its group
        GROUPS.mkdir(parents=True, exist_ok=True)
        self.mark = GROUPS / str(os.getpgid(0))
        self.mark.touch()
        return self

    def __exit__(self, *exc: object) -> None:
        self.mark.unlink(missing_ok=True)
