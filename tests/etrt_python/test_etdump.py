"""The profiler: a C++ consumer of the Conan package writes .etdump files with etrt::etdump,
Python reads them back (etrt.etdump.load), and `python -m etrt profile` tabulates and charts."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import etrt
import flatbuffers
import numpy as np
import pytest
import torch
from conan_consumer import ROOT, build_consumer, etrt_version, run
from etrt import etdump
from models import make

pytestmark = pytest.mark.slow

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="session")
def profiler(tmp_path_factory: pytest.TempPathFactory) -> Path:
    build = build_consumer(ROOT / "tests" / "apps" / "etdump", tmp_path_factory.mktemp("etdump"))
    return build / "etrt_profile"


@pytest.fixture(scope="session")
def package_lib_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """lib/ of the etrt Conan package, for the ctypes binding (ETRT_LIBRARY_DIR)."""
    out = tmp_path_factory.mktemp("etrt-pkg")
    proc = run(
        [
            "conan",
            "install",
            f"--requires=etrt/{etrt_version()}",
            "-s",
            "build_type=Release",
            "--output-folder",
            out,
            "--format=json",
        ]
    )
    nodes = json.loads(proc.stdout)["graph"]["nodes"].values()
    folder = next(n["package_folder"] for n in nodes if n.get("name") == "etrt")
    return Path(folder) / "lib"


def export_model(
    tmp_path: Path, name: str, batch: int, backend: str | None = None
) -> tuple[Path, Path, etrt.Program]:
    """(program, raw inputs file, program) for a tests/models.py model."""
    model, inputs = make(name, batch)
    program = etrt.export(model, inputs, backend=backend)
    path = tmp_path / f"{name}.etrt"
    program.save(path)
    raw = tmp_path / f"{name}.bin"
    raw.write_bytes(b"".join(t.contiguous().numpy().tobytes() for t in inputs))
    return path, raw, program


def profile_cpp(
    profiler: Path, program: Path, inputs: Path, out: Path, runs: int, *extra: str
) -> None:
    proc = subprocess.run(
        [
            str(profiler),
            str(program),
            "--inputs",
            str(inputs),
            "--runs",
            str(runs),
            "--etdump",
            str(out),
            *extra,
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert f"{runs} runs" in proc.stdout and "0 dropped" in proc.stdout, proc.stdout


def test_cpp_consumer_records_one_event_per_instruction_per_run(
    profiler: Path, tmp_path: Path
) -> None:
    program, inputs, exported = export_model(tmp_path, "mlp", 4)
    out = tmp_path / "mlp.etdump"
    profile_cpp(profiler, program, inputs, out, runs=3)

    dump = etdump.load(out)
    expected = exported.info.instruction_ops
    assert len(expected) >= 3
    assert dump.version == 1 and dump.dropped_events == 0
    assert len(dump.runs) == 3
    assert len(dump) == 3 * len(expected)
    for r, run_ in enumerate(dump.runs):
        assert run_.method == "forward" and run_.ok
        assert [e.name for e in run_.events] == expected
        assert [e.instruction for e in run_.events] == list(range(len(expected)))
        assert all(e.kind is etdump.EventKind.OPERATOR and e.run == r for e in run_.events)
        assert all(e.end_ns >= e.start_ns for e in run_.events)
        # In order and inside their run.
        assert run_.start_ns <= run_.events[0].start_ns
        assert all(
            a.end_ns <= b.start_ns for a, b in zip(run_.events, run_.events[1:], strict=False)
        )
        assert run_.events[-1].end_ns <= run_.end_ns
        assert all(e.output_shapes is None for e in run_.events)
    assert dump.runs[0].end_ns <= dump.runs[1].start_ns


def test_cpp_consumer_records_output_shapes_when_asked(profiler: Path, tmp_path: Path) -> None:
    program, inputs, exported = export_model(tmp_path, "cnn", 2)
    out = tmp_path / "cnn.etdump"
    profile_cpp(profiler, program, inputs, out, 2, "--shapes")

    dump = etdump.load(out)
    assert [e.name for e in dump.runs[0].events] == exported.info.instruction_ops
    for event in dump:
        assert event.output_shapes, f"{event.name} recorded no output shape"
    model, example = make("cnn", 2)
    with torch.no_grad():
        final = tuple(model(*example).shape)
    assert dump.runs[1].events[-1].output_shapes == (final,)
    convs = [e for e in dump.runs[0].events if e.name == "aten::convolution"]
    assert convs and convs[0].output_shapes == ((2, 16, 28, 28),)


def test_delegate_calls_are_recorded_with_their_backend(profiler: Path, tmp_path: Path) -> None:
    program, inputs, exported = export_model(tmp_path, "mlp", 2, backend="xnnpack-all")
    assert exported.info.instruction_ops == ["delegate:XnnpackBackend"]
    out = tmp_path / "mlp_xnnpack.etdump"
    profile_cpp(profiler, program, inputs, out, 2, "--shapes")

    events = list(etdump.load(out))
    assert [(e.name, e.kind, e.instruction) for e in events] == [
        ("XnnpackBackend", etdump.EventKind.DELEGATE, 0)
    ] * 2
    assert events[0].output_shapes == ((2, 10),)


def test_tracer_overhead_mode_reports_all_three_timings(profiler: Path, tmp_path: Path) -> None:
    program, inputs, _ = export_model(tmp_path, "mlp", 1)
    proc = subprocess.run(
        [str(profiler), str(program), "--inputs", str(inputs), "--runs", "40", "--overhead"],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    for key in ("no_tracer_us=", "null_tracer_us=", "etdump_us="):
        assert key in proc.stdout, proc.stdout


def run_cli(args: list[str], lib_dir: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, ETRT_LIBRARY_DIR=str(lib_dir), MPLBACKEND="Agg")
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "python"), env.get("PYTHONPATH", "")])
    return subprocess.run(
        [sys.executable, "-m", "etrt", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=600,
        check=False,
    )


def test_profile_cli_prints_a_table_and_writes_a_png(package_lib_dir: Path, tmp_path: Path) -> None:
    program, _, exported = export_model(tmp_path, "mlp", 1)
    chart = tmp_path / "chart.png"
    proc = run_cli(
        ["profile", str(program), "--runs", "5", "-o", str(chart)], package_lib_dir, tmp_path
    )
    assert proc.returncode == 0, proc.stderr

    lines = proc.stdout.splitlines()
    header = next(line for line in lines if line.startswith("operator"))
    for column in ("calls", "median us", "min us", "share"):
        assert column in header
    ops = set(exported.info.instruction_ops)
    rows = {
        line.split()[0]: line.split() for line in lines if line.split() and line.split()[0] in ops
    }
    assert set(rows) == ops
    addmm = rows["aten::addmm"]
    assert addmm[1] == "operator" and int(addmm[2]) == exported.info.instruction_ops.count(
        "aten::addmm"
    )
    between = next(line for line in lines if line.startswith("(between operators)"))
    shares = [float(r[5].rstrip("%")) for r in rows.values()]
    assert sum(shares) + float(between.split()[-1].rstrip("%")) == pytest.approx(100, abs=0.5)

    data = chart.read_bytes()
    assert data.startswith(PNG_SIGNATURE) and len(data) > 1000
    dump = etdump.load(program.with_suffix(".etdump"))
    assert len(dump.runs) == 5 and len(dump) == 5 * len(exported.info.instruction_ops)


def test_profile_cli_errors_are_one_line(package_lib_dir: Path, tmp_path: Path) -> None:
    proc = run_cli(["profile", str(tmp_path / "missing.etrt")], package_lib_dir, tmp_path)
    assert proc.returncode != 0
    assert proc.stderr.strip().count("\n") == 0 and proc.stderr.startswith("error: "), proc.stderr
    assert "missing.etrt" in proc.stderr

    bad = tmp_path / "bad.etrt"
    bad.write_bytes(b"not a program at all")
    proc = run_cli(["profile", str(bad)], package_lib_dir, tmp_path)
    assert proc.returncode != 0
    assert proc.stderr.strip().count("\n") == 0 and proc.stderr.startswith("error: "), proc.stderr


def test_corrupt_etdump_is_a_clear_error(profiler: Path, tmp_path: Path) -> None:
    program, inputs, _ = export_model(tmp_path, "mlp", 1)
    good = tmp_path / "good.etdump"
    profile_cpp(profiler, program, inputs, good, 2, "--shapes")
    data = good.read_bytes()

    bad = tmp_path / "bad.etdump"
    bad.write_bytes(data[:4] + b"PK\x03\x04" + data[8:])
    with pytest.raises(etdump.EtdumpFormatError, match=r"bad\.etdump: .*bad magic"):
        etdump.load(bad)
    bad.write_bytes(data[: len(data) // 2])
    with pytest.raises(etdump.EtdumpFormatError, match=r"bad\.etdump: not a valid etdump file"):
        etdump.load(bad)
    with pytest.raises(etdump.EtdumpFormatError, match="cannot read"):
        etdump.load(tmp_path / "absent.etdump")

    # Random damage: either still readable or EtdumpFormatError, never another exception.
    rng = random.Random(5)
    rejected = 0
    for _ in range(1500):
        damaged = bytearray(data)
        for _ in range(rng.randint(1, 4)):
            damaged[rng.randrange(len(damaged))] = rng.randrange(256)
        try:
            etdump.parse(bytes(damaged))
        except etdump.EtdumpFormatError:
            rejected += 1
    assert rejected > 100


def test_python_schema_reader_agrees_with_flatc(tmp_path: Path) -> None:
    """etrt.etdump reads fields by slot: a schema edit that moves a field must fail here."""
    subprocess.run(
        [
            "flatc",
            "--python",
            "--gen-onefile",
            "-o",
            str(tmp_path),
            str(ROOT / "schema/etdump.fbs"),
        ],
        check=True,
    )
    sys.path.insert(0, str(tmp_path))
    try:
        import etdump_generated as gen  # type: ignore[import-not-found]
    finally:
        sys.path.remove(str(tmp_path))
    b = flatbuffers.Builder(256)
    names = [b.CreateString(s) for s in ("forward", "aten::relu")]
    gen.ETDumpStartNamesVector(b, len(names))
    for n in reversed(names):
        b.PrependUOffsetTRelative(n)
    names_vec = b.EndVector()
    sizes = b.CreateNumpyVector(np.array([3, 4], dtype=np.int64))
    gen.TensorShapeStart(b)
    gen.TensorShapeAddSizes(b, sizes)
    shape = gen.TensorShapeEnd(b)
    gen.EventStartOutputShapesVector(b, 1)
    b.PrependUOffsetTRelative(shape)
    shapes = b.EndVector()
    gen.EventStart(b)
    gen.EventAddName(b, 1)
    gen.EventAddKind(b, gen.EventKind.Delegate)
    gen.EventAddInstruction(b, 7)
    gen.EventAddStartNs(b, 100)
    gen.EventAddEndNs(b, 250)
    gen.EventAddOutputShapes(b, shapes)
    event = gen.EventEnd(b)
    gen.RunStartEventsVector(b, 1)
    b.PrependUOffsetTRelative(event)
    events = b.EndVector()
    gen.RunStart(b)
    gen.RunAddMethod(b, 0)
    gen.RunAddStartNs(b, 90)
    gen.RunAddEndNs(b, 300)
    gen.RunAddOk(b, True)
    gen.RunAddEvents(b, events)
    run_ = gen.RunEnd(b)
    gen.ETDumpStartRunsVector(b, 1)
    b.PrependUOffsetTRelative(run_)
    runs = b.EndVector()
    gen.ETDumpStart(b)
    gen.ETDumpAddVersion(b, 1)
    gen.ETDumpAddNames(b, names_vec)
    gen.ETDumpAddRuns(b, runs)
    gen.ETDumpAddDroppedEvents(b, 9)
    b.Finish(gen.ETDumpEnd(b), b"ETDP")

    dump = etdump.parse(bytes(b.Output()))
    assert dump.dropped_events == 9
    assert dump.runs == (
        etdump.Run(
            "forward",
            90,
            300,
            True,
            (etdump.Event("aten::relu", etdump.EventKind.DELEGATE, 7, 0, 100, 250, ((3, 4),)),),
        ),
    )


def python_script(code: str, lib_dir: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, ETRT_LIBRARY_DIR=str(lib_dir))
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "python"), env.get("PYTHONPATH", "")])
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=600,
        check=False,
    )


def test_python_tracer_keeps_what_fits_and_counts_the_rest(
    package_lib_dir: Path, tmp_path: Path
) -> None:
    program, _, exported = export_model(tmp_path, "mlp", 1)
    per_run = len(exported.info.instruction_ops)
    code = f"""
import numpy as np
import etrt.runtime, etrt.tracer
m = etrt.runtime.load({str(program)!r}).method()
x = np.zeros(m.inputs[0].shape, np.float32)
with etrt.tracer.ETDumpTracer(max_events={per_run + 2}) as t:
    t.attach(m)
    m(x); m(x)
    t.detach(m)
    m(x)  # detached: not recorded
    print(t.num_runs, t.num_events, t.dropped_events)
    t.write("small.etdump")
"""
    proc = python_script(code, package_lib_dir, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["2", str(per_run + 2), str(per_run - 2)]
    dump = etdump.load(tmp_path / "small.etdump")
    assert dump.dropped_events == per_run - 2
    assert [len(r.events) for r in dump.runs] == [per_run, 2]
    assert [e.name for e in dump.runs[1].events] == exported.info.instruction_ops[:2]
