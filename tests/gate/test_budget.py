"""The gate's own time budget (tests/gate_budget.py): how it finds the CPUs a run may use,
what it holds each suite and the whole run to."""

from __future__ import annotations

import json
import os
from pathlib import Path

import gate_budget
import pytest

ROOT = Path(__file__).resolve().parents[2]


def _fake_proc(tmp_path: Path, cgroup: str, mountinfo: str) -> Path:
    proc = tmp_path / "proc"
    proc.mkdir()
    (proc / "cgroup").write_text(cgroup)
    (proc / "mountinfo").write_text(mountinfo)
    return proc


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_a_v1_quota_of_a_parent_group_limits_the_run(tmp_path: Path) -> None:
    mount = tmp_path / "cpu"
    _write(mount / "cpu.cfs_quota_us", "-1\n")
    _write(mount / "cpu.cfs_period_us", "100000\n")
    _write(mount / "ci" / "cpu.cfs_quota_us", "50000\n")  # half a CPU, on the parent
    _write(mount / "ci" / "cpu.cfs_period_us", "100000\n")
    _write(mount / "ci" / "job" / "cpu.cfs_quota_us", "-1\n")
    _write(mount / "ci" / "job" / "cpu.cfs_period_us", "100000\n")
    proc = _fake_proc(
        tmp_path,
        "5:memory:/ci/job\n3:cpu,cpuacct:/ci/job\n",
        f"30 25 0:26 / {mount} rw,relatime shared:10 - cgroup cgroup rw,cpu,cpuacct\n"
        f"31 25 0:27 / {tmp_path / 'memory'} rw - cgroup cgroup rw,memory\n",
    )
    assert gate_budget.available_cpus(proc) == 0.5


def test_a_v2_quota_counts_and_max_means_none(tmp_path: Path) -> None:
    mount = tmp_path / "unified"
    _write(mount / "cpu.max", "max 100000\n")
    _write(mount / "runner" / "cpu.max", "150000 100000\n")
    cgroup = "0::/runner\n"
    info = f"40 25 0:30 / {mount} rw - cgroup2 cgroup2 rw\n"
    affinity = len(os.sched_getaffinity(0))
    assert gate_budget.available_cpus(_fake_proc(tmp_path, cgroup, info)) == min(1.5, affinity)
    (mount / "runner" / "cpu.max").write_text("max 100000\n")
    (tmp_path / "proc" / "cgroup").write_text(cgroup)
    assert gate_budget.available_cpus(tmp_path / "proc") == affinity


def test_a_container_sees_its_own_group_as_the_mounts_root(tmp_path: Path) -> None:
    # Inside a container the mount's root is the container's group: its quota is in the mount.
    mount = tmp_path / "cpu"
    _write(mount / "cpu.cfs_quota_us", "100000\n")
    _write(mount / "cpu.cfs_period_us", "100000\n")
    proc = _fake_proc(
        tmp_path,
        "3:cpu,cpuacct:/docker/abc\n",
        f"30 25 0:26 /docker/abc {mount} rw - cgroup cgroup rw,cpu,cpuacct\n",
    )
    assert gate_budget.available_cpus(proc) == 1.0


def test_fewer_cpus_than_the_reference_scale_the_wall_budgets_only() -> None:
    budget = gate_budget.Budget.load(ROOT / "ci" / "budget.toml")
    budget.calibration_s = budget.reference_calibration_s
    budget.spent["total"] = budget.wall["total"] * 1.5
    budget.cpu["etpkg"] = budget.cpu_budget["etpkg"] * 1.5
    budget.cpus = gate_budget.GATE_CPUS
    assert budget.scale == pytest.approx(1.0)
    assert [line.split(":")[0] for line in budget.over()] == ["total", "etpkg"]
    budget.cpus = 1.0  # the same work on one CPU takes up to twice as long, the same CPU time
    assert budget.scale == pytest.approx(2.0)
    assert [line.split(":")[0] for line in budget.over()] == ["etpkg"]
    assert "1.00 CPUs to use, the wall budgets 2.00x for it" in budget.table()[0]


def test_a_suite_slowed_by_the_other_process_is_judged_by_its_cpu_time() -> None:
    # The slower class's CI run of 2026-12-06: consumers took 434 s of wall time beside the
    # runtime process, 1.9x its CPU time, at a calibration of 1.85x; it had not grown.
    budget = gate_budget.Budget.load(ROOT / "ci" / "budget.toml")
    budget.cpus = gate_budget.GATE_CPUS
    budget.calibration_s = budget.reference_calibration_s * 1.85
    budget.spent["consumers"] = 434.0
    budget.cpu["consumers"] = 286.0
    assert budget.over() == []
    row = next(line for line in budget.table() if line.lstrip().startswith("consumers"))
    assert "434 s" in row and "286 s CPU of" in row
    budget.cpu["consumers"] = budget.allowed("consumers") + 1  # grown: more work, not a wait
    assert [line.split(":")[0] for line in budget.over()] == ["consumers"]


def test_a_faster_machine_shortens_only_half_of_each_budget() -> None:
    budget = gate_budget.Budget.load(ROOT / "ci" / "budget.toml")
    budget.cpus = gate_budget.GATE_CPUS
    budget.calibration_s = budget.reference_calibration_s * 0.6
    assert budget.scale == pytest.approx(0.8)  # 0.5 fixed + 0.5 x 0.6
    budget.cpu["etpkg"] = budget.cpu_budget["etpkg"] * 0.75  # faster, but not 0.6x as fast
    assert budget.over() == []
    budget.cpu["etpkg"] = budget.cpu_budget["etpkg"] * 0.85  # grown on this machine
    assert [line.split(":")[0] for line in budget.over()] == ["etpkg"]
    budget.calibration_s = budget.reference_calibration_s * 1.5  # slower: the whole ratio
    assert budget.scale == pytest.approx(1.5)
    assert budget.allowed("etpkg") == pytest.approx(budget.cpu_budget["etpkg"] * 1.5)


def test_a_machine_slower_at_the_end_than_at_the_start_is_scaled_for_the_slower() -> None:
    budget = gate_budget.Budget.load(ROOT / "ci" / "budget.toml")
    budget.cpus = gate_budget.GATE_CPUS
    budget.calibration_s = budget.reference_calibration_s * 0.86
    budget.spent["total"] = budget.allowed("total") + 30  # slowed after its calibration
    assert [line.split(":")[0] for line in budget.over()] == ["total"]
    budget.recalibrate(budget.reference_calibration_s * 1.2)
    assert budget.over() == []
    budget.recalibrate(budget.reference_calibration_s * 0.7)  # faster again: the slower holds
    assert budget.calibration_s == pytest.approx(budget.reference_calibration_s * 1.2)


def test_combine_checks_the_runs_total_and_each_processes_suites(tmp_path: Path) -> None:
    (tmp_path / "ci").mkdir()
    toml = tmp_path / "ci" / "budget.toml"
    toml.write_text((ROOT / "ci" / "budget.toml").read_text())
    budget = gate_budget.Budget.load(toml)
    ref = budget.reference_calibration_s
    shards = []
    for name, suite, wall, cpu in [("sdk", "etpkg", 900.0, 100.0), ("runtime", "etrt_cpp", 50, 20)]:
        record = tmp_path / f"gate-times-{name}.json"
        record.write_text(
            json.dumps(
                {
                    "calibration_s": ref,
                    "cpus": 2.0,
                    "spent_s": {suite: wall, f"process {name}": wall},
                    "cpu_s": {suite: cpu},
                }
            )
        )
        shards.append(record)
    total = budget.wall["total"]
    assert gate_budget.combine(toml, shards, build_s=100, total_s=total - 1) == 0
    assert gate_budget.combine(toml, shards, build_s=100, total_s=total + 1) == 1
    written = json.loads((tmp_path / "build" / "gate-times.json").read_text())
    assert written["spent_s"]["total"] == total + 1
    assert written["cpu_s"] == {"etpkg": 100.0, "etrt_cpp": 20.0}
