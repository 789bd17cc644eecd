"""The CI gate's time budget (ci/budget.toml): each suite's wall time, and the build's, compared
with its budget scaled to the machine the run is on, so a change that grows the gate fails when
it lands instead of when CI runs out of time on the slower machine class.

The scale comes from a calibration run at the start of the session: a fixed C++ compile and a
fixed Python loop, the two kinds of work the gate is made of, timed here and compared with the
same calibration on the machine the budget was written for."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import tomllib

BUDGET_OPTION = "--gate-budget"

# Template-heavy enough that the compiler, not process start-up, dominates (about a second).
_CALIBRATION_CXX = r"""
#include <algorithm>
#include <map>
#include <numeric>
#include <string>
#include <vector>
template <int N> struct Fib { static constexpr long v = Fib<N - 1>::v + Fib<N - 2>::v; };
template <> struct Fib<0> { static constexpr long v = 0; };
template <> struct Fib<1> { static constexpr long v = 1; };
template <typename T> T work(std::vector<T> v) {
  std::sort(v.begin(), v.end());
  std::map<T, std::string> m;
  for (auto x : v) m[x] = std::to_string(x);
  return std::accumulate(v.begin(), v.end(), T{}) + static_cast<T>(m.size());
}
template int work<int>(std::vector<int>);
template long work<long>(std::vector<long>);
template double work<double>(std::vector<double>);
template float work<float>(std::vector<float>);
template short work<short>(std::vector<short>);
template unsigned work<unsigned>(std::vector<unsigned>);
long fib() { return Fib<80>::v; }
"""


def _python_loop() -> float:
    start = time.process_time()
    total = 0
    for i in range(8_000_000):
        total += i * i % 7
    assert total > 0
    return time.process_time() - start


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def calibrate() -> float:
    """CPU seconds this machine takes for the fixed work, best of three. CPU time rather than
    wall time, so that other processes running beside the calibration do not inflate it."""
    with tempfile.TemporaryDirectory(prefix="etrt-calibrate-") as tmp:
        src = Path(tmp) / "calibrate.cpp"
        src.write_text(_CALIBRATION_CXX)
        best = float("inf")
        for _ in range(3):
            before = _children_cpu()
            subprocess.run(
                ["c++", "-std=c++17", "-O2", "-c", str(src), "-o", str(Path(tmp) / "c.o")],
                check=True,
            )
            best = min(best, _children_cpu() - before + _python_loop())
    return best


@dataclass
class Budget:
    path: Path
    reference_calibration_s: float
    suites: dict[str, float]  # budget seconds on the reference machine, "total" and "build" too
    calibration_s: float = 0.0
    spent: dict[str, float] = field(default_factory=dict)
    started: float = field(default_factory=time.monotonic)

    @classmethod
    def load(cls, path: Path) -> Budget:
        data = tomllib.loads(path.read_text())
        return cls(
            path=path,
            reference_calibration_s=float(data["calibration"]["reference_seconds"]),
            suites={k: float(v) for k, v in data["budget"].items()},
        )

    @property
    def scale(self) -> float:
        return self.calibration_s / self.reference_calibration_s

    def allowed(self, suite: str) -> float:
        return self.suites[suite] * self.scale

    def over(self) -> list[str]:
        """One line per suite (and the total) that spent more than it is allowed here."""
        return [
            f"{suite}: {seconds:.0f} s, allowed {self.allowed(suite):.0f} s"
            for suite, seconds in sorted(self.spent.items())
            if suite in self.suites and seconds > self.allowed(suite)
        ]

    def table(self) -> list[str]:
        head = (
            f"gate budget ({self.path.name}; the calibration took {self.calibration_s:.2f} s, "
            f"{self.scale:.2f}x the reference machine's):"
        )
        rows = [
            f"  {suite:<12} {seconds:7.0f} s of {self.allowed(suite):5.0f} s"
            if suite in self.suites
            else f"  {suite:<12} {seconds:7.0f} s (no budget of its own)"
            for suite, seconds in sorted(self.spent.items())
        ]
        return [head, *rows, *(f"OVER BUDGET: {line}" for line in self.over())]


def suite_of(nodeid: str) -> str:
    """tests/etrt_python/test_x.py::t -> etrt_python; a test outside a suite folder -> other."""
    parts = nodeid.split("::", 1)[0].split("/")
    return parts[1] if len(parts) > 2 and parts[0] == "tests" else "other"


_ACTIVE: list[Budget] = []  # the session's budget, when --gate-budget is given


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        BUDGET_OPTION,
        metavar="TOML",
        help="check each suite's wall time against this budget (ci/budget.toml) at the end",
    )


def pytest_configure(config: pytest.Config) -> None:
    path = config.getoption(BUDGET_OPTION)
    if path:
        budget = Budget.load(Path(path))
        budget.calibration_s = calibrate()
        build_s = os.environ.get("ETRT_BUILD_SECONDS")
        if build_s:
            budget.spent["build"] = float(build_s)
        _ACTIVE[:] = [budget]


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    for budget in _ACTIVE:
        suite = suite_of(report.nodeid)
        budget.spent[suite] = budget.spent.get(suite, 0.0) + report.duration


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    for budget in _ACTIVE:
        # The session's wall time (collection and imports included) plus the build's.
        budget.spent["total"] = time.monotonic() - budget.started + budget.spent.get("build", 0)
        out = Path(session.config.rootpath) / "build" / "gate-times.json"
        out.parent.mkdir(parents=True, exist_ok=True)
        record = {
            "calibration_s": budget.calibration_s,
            "scale": budget.scale,
            "spent_s": budget.spent,
            "allowed_s": {k: budget.allowed(k) for k in budget.suites},
        }
        out.write_text(json.dumps(record, indent=2) + "\n")
        if budget.over() and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    for budget in _ACTIVE:
        for line in budget.table():
            terminalreporter.write_line(line)
