"""A test that waits for one of the gate's background pre-builds raises that build's priority
(tests/prebuild.py): the build is then what the run waits for."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import time
from pathlib import Path

import prebuild
import pytest

# A stand-in pre-build: leads its own group, niced, holds the lock until told to let go, then
# stays alive until told to stop.
HOLDER = r"""
import fcntl, os, sys, time
os.setpgid(0, 0)
lock = open(sys.argv[1], "w")
fcntl.flock(lock, fcntl.LOCK_EX)
open(sys.argv[2], "w").close()
for step in sys.argv[3:]:
    while not os.path.exists(step):
        time.sleep(0.02)
    fcntl.flock(lock, fcntl.LOCK_UN)
"""


def test_waiting_for_a_prebuild_runs_it_at_the_waiters_priority(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    groups = tmp_path / "groups"
    groups.mkdir()
    monkeypatch.setattr(prebuild, "GROUPS", groups)
    lock_path, held, release = tmp_path / ".lock", tmp_path / "held", tmp_path / "release"
    stop = tmp_path / "stop"
    holder = subprocess.Popen(
        ["nice", "-n", "10", sys.executable, "-c", HOLDER, lock_path, held, release, stop]
    )
    try:
        deadline = time.monotonic() + 30
        while not held.exists():
            assert holder.poll() is None and time.monotonic() < deadline, "holder did not start"
            time.sleep(0.02)
        (groups / str(holder.pid)).touch()
        assert os.getpriority(os.PRIO_PROCESS, holder.pid) == 10
        # Let the holder go once the waiter has had time to raise it and block.
        releaser = subprocess.Popen(
            [sys.executable, "-c", "import pathlib, sys, time; time.sleep(1);"
             "pathlib.Path(sys.argv[1]).touch()", release]
        )  # fmt: skip
        priority_while_waiting: list[int] = []
        with lock_path.open("w") as lock:
            start = time.monotonic()
            prebuild.wait_for(lock)
            waited = time.monotonic() - start
            fcntl.flock(lock, fcntl.LOCK_UN)
        releaser.wait(timeout=30)
        assert waited > 0.5, "the lock was not held: nothing was waited for"
        assert holder.poll() is None
        priority_while_waiting.append(os.getpriority(os.PRIO_PROCESS, holder.pid))
    finally:
        release.touch()
        stop.touch()
        holder.wait(timeout=30)
    mine = os.getpriority(os.PRIO_PROCESS, 0)
    # Raising a priority needs CAP_SYS_NICE (CI runs as root); without it nothing may change.
    expected = mine if os.geteuid() == 0 else 10
    assert priority_while_waiting == [expected]
