"""etpkg's command line as a user meets it: every subcommand's -h describes it, a short flag
means one thing across subcommands, exit status 2 for usage and 1 for failures, progress on a
terminal only, and the user cache directory rule."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from etpkg._internal.cache import cache_dir, cmake_cache_dir
from etpkg_fixtures import ensure_toysdk, env, run_etpkg, run_on_tty

COMMANDS = ("wheelify", "verify", "publish")
# -r names the server in both commands that take one: a Conan remote, a package index.
SAME_MEANING = {"-r": {"--remote", "--repository"}}


def _help(command: str) -> str:
    proc = run_etpkg(command, "-h")
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_every_subcommand_help_describes_it() -> None:
    for command in COMMANDS:
        blocks = _help(command).split("\n\n")
        assert len(blocks) > 2 and not blocks[1].lstrip().startswith(
            ("positional arguments", "options")
        ), (command, blocks[:2])


def test_a_short_flag_means_one_thing_across_subcommands() -> None:
    meanings: dict[str, set[str]] = {}
    for command in COMMANDS:
        for short, long in re.findall(r"^\s+(-\w+)(?: \S+)?, (--[\w-]+)", _help(command), re.M):
            meanings.setdefault(short, set()).add(long)
    assert meanings["-u"] == {"--update"} and meanings["-q"] == {"--quiet"}, meanings
    assert "-p" not in meanings, meanings  # publish's --password is spelled out, like --username
    for short, longs in meanings.items():
        assert len(longs) == 1 or longs == SAME_MEANING.get(short), (short, longs)


def test_usage_errors_exit_2_and_failures_exit_1(tmp_path: Path) -> None:
    for usage in (["wheelify", "--update"], ["verify"], ["nonsense"], ["publish", "x.whl"]):
        proc = run_etpkg(*usage)
        assert proc.returncode == 2, (usage, proc.stderr)
        assert proc.stderr.startswith("etpkg: error:") and proc.stderr.count("\n") == 1
    proc = run_etpkg("verify", tmp_path / "nope.whl")
    assert proc.returncode == 1 and "no such wheel" in proc.stderr
    proc = run_etpkg("wheelify", "no_such_package/1.0", "-of", tmp_path)
    assert proc.returncode == 1 and proc.stderr.startswith("etpkg: error:"), proc.stderr


def test_wheelify_shows_its_steps_on_a_terminal_only(tmp_path: Path) -> None:
    ref = ensure_toysdk()
    argv: list[str | Path] = [sys.executable, "-m", "etpkg", "wheelify", ref]
    status, out, seen = run_on_tty([*argv, "-of", tmp_path / "a"], env=env())
    assert status == 0, seen
    for step in ("reading the Conan package", "staging the wheel", "repairing with auditwheel"):
        assert f"etpkg wheelify: {step}..." in seen, repr(seen)
    # Cleared at the end (Conan's colour library resets the terminal's colours at exit).
    assert seen.removesuffix("\x1b[0m").endswith("\r\x1b[K"), repr(seen[-80:])
    assert Path(out.strip()).is_file()
    status, _, seen = run_on_tty([*argv, "-of", tmp_path / "b", "-q"], env=env())
    assert status == 0 and seen.replace("\x1b[0m", "") == "", repr(seen)
    proc = run_etpkg("wheelify", ref, "-of", tmp_path / "c")  # not a terminal
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr


def test_cache_dir_follows_etpkg_then_xdg_then_home(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("ETPKG_CACHE_DIR", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    assert cache_dir() == tmp_path / "home" / ".cache" / "etpkg"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/ignored")  # the XDG rule: absolute only
    assert cache_dir() == tmp_path / "home" / ".cache" / "etpkg"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cmake_cache_dir() == tmp_path / "xdg" / "etpkg" / "cmake-venvs"
    monkeypatch.setenv("ETPKG_CACHE_DIR", str(tmp_path / "mine"))
    assert cmake_cache_dir() == tmp_path / "mine" / "cmake-venvs"
