"""The CI gate's time budget (ci/budget.toml): each suite's CPU time, the build's and the whole
run's wall time, compared with their budgets scaled to the machine the run is on, so a change
that grows the gate fails when it lands instead of when CI runs out of time on the slower
machine class.

The scale comes from a calibration run at the start of the session and again at its end (the
slower of the two): a fixed C++ compile and a fixed Python loop, the two kinds of work the gate
is made of, timed here and compared with the same calibration on the machine the budget was
written for. The calibration counts CPU
seconds, so it cannot see a CPU quota (a container limited to fewer CPUs than it has cores):
the wall budgets also grow by how far the CPUs this process may use, quota included, fall
short of the GATE_CPUS the budget was written for.

ci/test.sh runs the gate as two pytest processes side by side (`--gate-shard NAME` each): each
checks its own suites and writes build/gate-times-NAME.json; `python tests/gate_budget.py
combine` then checks the whole run's wall time against the total and prints one table."""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Generator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import tomllib

BUDGET_OPTION = "--gate-budget"
# The reference machine's CPUs: the gate's two processes each keep one busy.
GATE_CPUS = 2.0
SHARD_OPTION = "--gate-shard"
# The part of the gate's time that a faster CPU does not shorten. A Zen 5 machine whose
# calibration took 0.68-0.74x the reference's ran the gate in 0.82-0.88x its time (611-656 s
# against 748): scaled by the calibration alone its budget failed a gate that had not grown.
FIXED_SHARE = 0.5

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


def _cgroup_dirs(proc_cgroup: str, mountinfo: str) -> list[Path]:
    """The cgroup directories that may hold this process's CPU quota, innermost first: for each
    cgroup mount (v2, or v1 with the cpu controller), the process's own group and its parents
    up to the mount. /proc/self/cgroup and /proc/self/mountinfo's text are the arguments."""
    groups: dict[str, str] = {}  # "" for v2, "cpu" for v1's cpu controller -> path in hierarchy
    for line in proc_cgroup.splitlines():
        hid, controllers, path = line.split(":", 2)
        if hid == "0" and controllers == "":
            groups[""] = path
        elif "cpu" in controllers.split(","):
            groups["cpu"] = path
    dirs: list[Path] = []
    for line in mountinfo.splitlines():
        left, _, right = line.partition(" - ")
        fields, after = left.split(), right.split()
        if len(fields) < 5 or len(after) < 3:
            continue
        root, mount = fields[3], Path(fields[4])
        fstype, options = after[0], after[2].split(",")
        v1_cpu = fstype == "cgroup" and "cpu" in options
        key = "" if fstype == "cgroup2" else "cpu" if v1_cpu else None
        if key is None or key not in groups:
            continue
        rel = os.path.relpath(groups[key], root)
        if rel.startswith(".."):
            continue  # the process's group is outside this mount's view
        here = mount / rel if rel != "." else mount
        while True:
            dirs.append(here)
            if here == mount:
                break
            here = here.parent
    return dirs


def _quota_cpus(group: Path) -> float | None:
    """The CPUs a cgroup's quota allows (v2 cpu.max, v1 cpu.cfs_quota_us), None when unlimited."""
    try:
        if (group / "cpu.max").is_file():
            quota, period = (group / "cpu.max").read_text().split()[:2]
        else:
            quota = (group / "cpu.cfs_quota_us").read_text().strip()
            period = (group / "cpu.cfs_period_us").read_text().strip()
    except (OSError, ValueError):
        return None
    if quota in ("max", "-1") or float(period) <= 0:
        return None
    return float(quota) / float(period)


def available_cpus(proc: Path = Path("/proc/self")) -> float:
    """CPUs this process may use: its affinity, lowered by any CPU quota of its cgroups."""
    cpus = float(len(os.sched_getaffinity(0)))
    try:
        dirs = _cgroup_dirs((proc / "cgroup").read_text(), (proc / "mountinfo").read_text())
    except OSError:
        return cpus
    quotas = [q for q in map(_quota_cpus, dirs) if q is not None]
    return min([cpus, *quotas])


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _cpu() -> float:
    """CPU seconds of this process and the children it has waited for."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime + _children_cpu()


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
    # Wall seconds on the reference machine for the build and the whole run ("build", "total").
    wall: dict[str, float]
    # CPU seconds on the reference machine per suite folder, its children's included. A suite's
    # wall time depends on what the other process does beside it (on the slower class a suite
    # ran 2.5x its reference wall time at a calibration of 1.85x while its CPU time kept to
    # the calibration), so growth is judged by CPU and the run's length by the total.
    cpu_budget: dict[str, float]
    calibration_s: float = 0.0
    cpus: float = GATE_CPUS  # CPUs the run may use (available_cpus)
    shard: str | None = None  # one of the gate's processes: its suites, not the whole run
    spent: dict[str, float] = field(default_factory=dict)  # wall seconds
    cpu: dict[str, float] = field(default_factory=dict)  # CPU seconds per suite, children too
    started: float = field(default_factory=time.monotonic)

    @classmethod
    def load(cls, path: Path) -> Budget:
        data = tomllib.loads(path.read_text())
        return cls(
            path=path,
            reference_calibration_s=float(data["calibration"]["reference_seconds"]),
            wall={k: float(v) for k, v in data["wall"].items()},
            cpu_budget={k: float(v) for k, v in data["cpu"].items()},
        )

    def recalibrate(self, seconds: float) -> None:
        """The calibration again at the end of the run: the slower of the two scales it. A
        shared VM's speed drifts (a Zen 5 one ran compute-bound work 1.5x slower for minutes at
        a time): a run that slowed after a fast calibration failed its total (1056 s of 977 at
        0.86x) with no suite grown."""
        self.calibration_s = max(self.calibration_s, seconds)

    @property
    def cpu_scale(self) -> float:
        """How much longer the run takes for having fewer CPUs than the reference's."""
        return max(1.0, GATE_CPUS / self.cpus)

    @property
    def speed_scale(self) -> float:
        """How much longer the run takes for the CPU's speed: the calibration's ratio on a slower
        machine; on a faster one only part of the gate gets faster with it (process start-up,
        disk, waits on other processes do not), so half the budget keeps the reference's time."""
        ratio = self.calibration_s / self.reference_calibration_s
        return ratio if ratio >= 1.0 else FIXED_SHARE + (1.0 - FIXED_SHARE) * ratio

    @property
    def scale(self) -> float:
        """The wall budgets' scale. CPU budgets take the speed's only: fewer CPUs, or a quota,
        stretch the same work's wall time, not its CPU time."""
        return self.speed_scale * self.cpu_scale

    def allowed(self, key: str) -> float:
        """The wall seconds allowed here for "build" or "total", the CPU seconds for a suite."""
        if key in self.wall:
            return self.wall[key] * self.scale
        return self.cpu_budget[key] * self.speed_scale

    def over(self) -> list[str]:
        """One line per wall budget and suite that spent more than it is allowed here."""
        lines = [
            f"{key}: {self.spent[key]:.0f} s, allowed {self.allowed(key):.0f} s"
            for key in sorted(self.wall)
            if key in self.spent and self.spent[key] > self.allowed(key)
        ]
        lines += [
            f"{suite}: {self.cpu[suite]:.0f} s CPU, allowed {self.allowed(suite):.0f} s CPU"
            for suite in sorted(self.cpu_budget)
            if suite in self.cpu and self.cpu[suite] > self.allowed(suite)
        ]
        return lines

    def table(self) -> list[str]:
        what = f"gate budget, process {self.shard}" if self.shard else "gate budget"
        cpus = (
            f"; {self.cpus:.2f} CPUs to use, the wall budgets {self.cpu_scale:.2f}x for it"
            if self.cpu_scale > 1.0
            else ""
        )
        head = (
            f"{what} ({self.path.name}; the calibration took {self.calibration_s:.2f} s, "
            f"{self.calibration_s / self.reference_calibration_s:.2f}x the reference "
            f"machine's{cpus}):"
        )
        rows = []
        for key in sorted(set(self.spent) | set(self.cpu)):
            wall = f"{self.spent[key]:7.0f} s" if key in self.spent else " " * 9
            if key in self.wall:
                rows.append(f"  {key:<12} {wall} of {self.allowed(key):5.0f} s")
            elif key in self.cpu_budget:
                cpu = self.cpu.get(key, 0.0)
                rows.append(
                    f"  {key:<12} {wall}, {cpu:5.0f} s CPU of {self.allowed(key):5.0f} s CPU"
                )
            else:
                rows.append(f"  {key:<12} {wall} (no budget)")
        return [head, *rows, *(f"OVER BUDGET: {line}" for line in self.over())]

    def record(self) -> dict[str, object]:
        return {
            "shard": self.shard,
            "calibration_s": self.calibration_s,
            "cpus": self.cpus,
            "scale": self.scale,
            "speed_scale": self.speed_scale,
            "spent_s": self.spent,
            "cpu_s": self.cpu,
            "allowed_s": {k: self.allowed(k) for k in [*self.wall, *self.cpu_budget]},
        }


def suite_of(nodeid: str) -> str:
    """tests/etrt_python/test_x.py::t -> etrt_python; a test outside a suite folder -> other."""
    parts = nodeid.split("::", 1)[0].split("/")
    return parts[1] if len(parts) > 2 and parts[0] == "tests" else "other"


_ACTIVE: list[Budget] = []  # the session's budget, when --gate-budget is given


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        BUDGET_OPTION,
        metavar="TOML",
        help="check each suite's CPU time and the run's wall time against this budget "
        "(ci/budget.toml) at the end",
    )
    parser.addoption(
        SHARD_OPTION,
        metavar="NAME",
        help="this process is one of the gate's parallel processes: check its suites only and "
        "write build/gate-times-NAME.json (`python tests/gate_budget.py combine` checks the total)",
    )


def pytest_configure(config: pytest.Config) -> None:
    path = config.getoption(BUDGET_OPTION)
    if path:
        budget = Budget.load(Path(path))
        budget.shard = config.getoption(SHARD_OPTION)
        budget.calibration_s = calibrate()
        budget.cpus = available_cpus()
        build_s = os.environ.get("ETRT_BUILD_SECONDS")
        if build_s and not budget.shard:
            budget.spent["build"] = float(build_s)
        _ACTIVE[:] = [budget]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Generator[None, object, object]:
    before = _cpu() if _ACTIVE else 0.0
    try:
        return (yield)
    finally:
        for budget in _ACTIVE:
            suite = suite_of(item.nodeid)
            budget.cpu[suite] = budget.cpu.get(suite, 0.0) + _cpu() - before


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    for budget in _ACTIVE:
        suite = suite_of(report.nodeid)
        budget.spent[suite] = budget.spent.get(suite, 0.0) + report.duration


def times_path(root: Path, shard: str | None) -> Path:
    return root / "build" / (f"gate-times-{shard}.json" if shard else "gate-times.json")


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    for budget in _ACTIVE:
        # The session's wall time (collection and imports included), plus the build's for a
        # whole run; a shard's total is only its own process's (`combine` checks the run's).
        session_s = time.monotonic() - budget.started
        budget.recalibrate(calibrate())
        if budget.shard:
            budget.spent[f"process {budget.shard}"] = session_s
        else:
            budget.spent["total"] = session_s + budget.spent.get("build", 0)
        out = times_path(Path(session.config.rootpath), budget.shard)
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_suffix(".tmp")
        tmp.write_text(json.dumps(budget.record(), indent=2) + "\n")
        tmp.replace(out)
        if budget.over() and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    for budget in _ACTIVE:
        for line in budget.table():
            terminalreporter.write_line(line)


def combine(budget_path: Path, shard_files: list[Path], build_s: float, total_s: float) -> int:
    """The whole run's table from the shards' records; 1 when a suite or the total is over."""
    budget = Budget.load(budget_path)
    records = [json.loads(f.read_text()) for f in shard_files]
    # The slowest calibration of the run: the budget is scaled for the busier process.
    budget.calibration_s = max(float(r["calibration_s"]) for r in records)
    budget.cpus = min(float(r.get("cpus", GATE_CPUS)) for r in records)
    budget.shard = None
    for r in records:
        for suite, seconds in r["spent_s"].items():
            budget.spent[suite] = budget.spent.get(suite, 0.0) + float(seconds)
        for suite, seconds in r.get("cpu_s", {}).items():
            budget.cpu[suite] = budget.cpu.get(suite, 0.0) + float(seconds)
    budget.spent["build"] = build_s
    budget.spent["total"] = total_s
    out = times_path(budget_path.resolve().parents[1], None)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(budget.record(), indent=2) + "\n")
    for line in budget.table():
        print(line)
    return 1 if budget.over() else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python tests/gate_budget.py")
    sub = parser.add_subparsers(dest="command", required=True)
    c = sub.add_parser("combine", help="check the whole gate run from its processes' records")
    c.add_argument("budget", type=Path, help="ci/budget.toml")
    c.add_argument("records", type=Path, nargs="+", help="build/gate-times-NAME.json files")
    c.add_argument("--build-seconds", type=float, required=True)
    c.add_argument("--total-seconds", type=float, required=True)
    args = parser.parse_args(argv)
    missing = [str(f) for f in args.records if not f.is_file()]
    if missing:
        print(
            f"gate budget: no record {', '.join(missing)} (a process did not finish)",
            file=sys.stderr,
        )
        return 1
    return combine(args.budget, args.records, args.build_seconds, args.total_seconds)


if __name__ == "__main__":
    sys.exit(main())
