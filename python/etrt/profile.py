"""`python -m etrt profile`: runs a program with the etdump tracer, then tells where the time goes.

Runs the method `runs` times (after `warmup` unrecorded runs) through the shipped libraries,
writes the .etdump and prints a per-operator table: each operator's time in one run (all its
calls summed), the median and the fastest over the runs, and its share of all recorded time;
the last row is the run itself, whose median is the header's. With
matplotlib it also draws what the table cannot show: a timeline of the median run, one row per
operator, each call a bar where it ran.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from . import etdump
from .errors import EtrtError
from .etdump import ETDump, EventKind, Run
from .run_program import method_inputs
from .runtime import Module
from .tracer import ETDumpTracer

# Timeline rows drawn individually; the rest share one "other" row.
CHART_TOP = 15
BETWEEN = "(between operators)"


@dataclass(frozen=True)
class OperatorStat:
    """One operator (or delegate backend): its time in each recorded run, all calls summed."""

    name: str
    kind: EventKind | None  # None: the run's time outside every event
    calls: int  # per run
    per_run_ns: tuple[int, ...]

    @property
    def median_ns(self) -> float:
        return float(statistics.median(self.per_run_ns))

    @property
    def min_ns(self) -> int:
        return min(self.per_run_ns)


@dataclass(frozen=True)
class Profile:
    program: Path
    method: str
    random_inputs: bool
    dump: ETDump
    etdump_path: Path
    stats: tuple[OperatorStat, ...]

    @property
    def median_run_ns(self) -> float:
        return statistics.median(r.duration_ns for r in self.dump.runs) if self.dump.runs else 0.0

    @property
    def min_run_ns(self) -> int:
        return min((r.duration_ns for r in self.dump.runs), default=0)


def summarize(runs: Sequence[Run]) -> tuple[OperatorStat, ...]:
    """Per (name, kind): its time in each run; the most expensive (by median) first, then the
    time between operators (dispatch, the runtime's own work)."""
    if not runs:
        return ()
    keys: dict[tuple[str, EventKind], None] = {}
    for run in runs:
        for e in run.events:
            keys.setdefault((e.name, e.kind), None)
    per_run = {key: [0] * len(runs) for key in keys}
    calls = dict.fromkeys(keys, 0)
    for r, run in enumerate(runs):
        for e in run.events:
            per_run[(e.name, e.kind)][r] += e.duration_ns
            calls[(e.name, e.kind)] += 1
    stats = sorted(
        (OperatorStat(name, kind, calls[(name, kind)] // len(runs), tuple(times))
         for (name, kind), times in per_run.items()),
        key=lambda s: (-s.median_ns, s.name),
    )  # fmt: skip
    between = tuple(
        max(run.duration_ns - sum(e.duration_ns for e in run.events), 0) for run in runs
    )
    return (*stats, OperatorStat(BETWEEN, None, 0, between))


def _row(name: str, kind: str, calls: str, median: str, low: str, share: str, width: int) -> str:
    return f"{name:<{width}}  {kind:<8}  {calls:>5}  {median:>10}  {low:>10}  {share:>6}"


def format_table(stats: Sequence[OperatorStat], runs: Sequence[Run]) -> str:
    """One row per operator (time per run: median and fastest), then the whole run."""
    width = max([len("operator"), *(len(s.name) for s in stats)])
    lines = [_row("operator", "kind", "calls", "median us", "min us", "share", width)]
    median_run = statistics.median(r.duration_ns for r in runs)
    recorded = sum(r.duration_ns for r in runs)  # shares add up to the runs' whole time
    for s in stats:
        kind = s.kind.name.lower() if s.kind is not None else ""
        calls = str(s.calls) if s.kind is not None else ""
        share = f"{sum(s.per_run_ns) / recorded:.1%}" if recorded else "-"
        lines.append(_row(s.name, kind, calls, f"{s.median_ns / 1e3:.2f}",
                          f"{s.min_ns / 1e3:.2f}", share, width))  # fmt: skip
    calls = str(sum(s.calls for s in stats))
    low = min(r.duration_ns for r in runs)
    lines.append(
        _row("run", "", calls, f"{median_run / 1e3:.2f}", f"{low / 1e3:.2f}", "100%", width)
    )
    return "\n".join(lines)


NO_MATPLOTLIB = "matplotlib is not installed: pip install 'etrt[profile]' draws the timeline"


def can_draw() -> bool:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def median_run(runs: Sequence[Run]) -> tuple[int, Run]:
    """The run whose duration is the (lower) median, and its index."""
    order = sorted(range(len(runs)), key=lambda i: runs[i].duration_ns)
    index = order[(len(order) - 1) // 2]
    return index, runs[index]


def write_chart(stats: Sequence[OperatorStat], runs: Sequence[Run], path: Path, title: str) -> Path:
    """A timeline of the median run: one row per operator (the most expensive on top), each call
    a bar from its start to its end; gaps are the time between operators."""
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ModuleNotFoundError:
        raise EtrtError(NO_MATPLOTLIB) from None
    index, run = median_run(runs)
    names = [s.name for s in stats if s.kind is not None]
    shown = names[:CHART_TOP]
    rest = len(names) - len(shown)
    labels = shown + ([f"other ({rest} operator{'s' if rest > 1 else ''})"] if rest else [])
    row = {name: (shown.index(name) if name in shown else len(shown)) for name in names}
    fig = Figure(figsize=(10, 1.4 + 0.35 * max(len(labels), 1)), layout="constrained")
    FigureCanvasAgg(fig)  # render without pyplot or a display
    ax = fig.subplots()
    colors = [f"C{i % 10}" for i in range(len(labels))]
    spans: dict[int, list[tuple[float, float]]] = {}
    for e in run.events:
        start = (e.start_ns - run.start_ns) / 1e3
        spans.setdefault(row[e.name], []).append((start, max(e.duration_ns / 1e3, 1e-3)))
    for y, bars in spans.items():
        ax.broken_barh(bars, (y - 0.4, 0.8), facecolors=colors[y])
    ax.set_yticks(range(len(labels)), labels)
    ax.set_ylim(len(labels) - 0.5, -0.5)  # the most expensive on top
    ax.set_xlim(0, run.duration_ns / 1e3)
    ax.set_xlabel(f"time in run {index} (us); it took {run.duration_ns / 1e3:.1f} us, the median")
    ax.set_title(title)
    ax.grid(axis="x", alpha=0.3)
    if not path.parent.is_dir():
        raise EtrtError(f"cannot write {path}: directory {path.parent} does not exist")
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        fig.savefig(tmp, format="png", dpi=100)
        tmp.replace(path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise EtrtError(f"cannot write {path}: {exc.strerror or exc}") from exc
    return path


def run_profile(
    program: Path,
    method: str,
    input_paths: Sequence[Path],
    runs: int,
    etdump_path: Path,
    warmup: int = 1,
    record_shapes: bool = False,
    progress: Callable[[int, int], None] | None = None,
    data: Path | None = None,
) -> Profile:
    """Runs `method` warmup + runs times, recording the last `runs`; writes etdump_path. `data`
    is the named data map (.ptd) of a program exported with external constants."""
    if runs < 1:
        raise EtrtError("--runs must be at least 1")
    if not program.is_file():
        raise EtrtError(f"no such program: {program}")
    if not etdump_path.parent.is_dir():
        raise EtrtError(
            f"cannot write {etdump_path}: directory {etdump_path.parent} does not exist"
        )
    if data is not None and not data.is_file():
        raise EtrtError(f"no such data map: {data}")
    with Module(program, data) as module:
        m = module.method(method)
        inputs = method_inputs(method, m.inputs, input_paths)
        for i, value in enumerate(inputs):
            m.set_input(i, value)
        for _ in range(warmup):
            m.execute()
        # Room for every event: a method's instructions are fixed, so the warm-up run tells.
        with ETDumpTracer(max_runs=runs, record_shapes=record_shapes) as probe:
            probe.attach(m)
            m.execute()
            probe.detach(m)
            per_run = probe.num_events
        with ETDumpTracer(
            max_events=max(per_run * runs, 1), max_runs=runs, record_shapes=record_shapes
        ) as tracer:
            tracer.attach(m)
            for r in range(runs):
                m.execute()
                if progress is not None:
                    progress(r + 1, runs)
            tracer.detach(m)
            tracer.write(etdump_path)
    dump = etdump.load(etdump_path)
    return Profile(program, method, not input_paths, dump, etdump_path, summarize(dump.runs))
