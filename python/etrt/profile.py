"""`python -m etrt profile`: runs a program with the etdump tracer, then tells where the time goes.

Runs the method `runs` times (after `warmup` unrecorded runs) through the shipped libraries,
writes the .etdump, prints a per-operator table (count, total, mean, share) and draws the same
as a PNG bar chart.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from . import etdump
from .errors import EtrtError
from .etdump import ETDump, Event, EventKind
from .run_program import method_inputs
from .runtime import Module
from .tracer import ETDumpTracer

# Bars drawn individually; the rest are summed into one "other" bar.
CHART_TOP = 15


@dataclass(frozen=True)
class OperatorStat:
    """Every event of one operator (or delegate backend) across the recorded runs."""

    name: str
    kind: EventKind
    count: int
    total_ns: int
    share: float  # of the time spent in all events, 0..1

    @property
    def mean_ns(self) -> float:
        return self.total_ns / self.count


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


def summarize(events: Iterable[Event]) -> tuple[OperatorStat, ...]:
    """Per (name, kind) totals, the most expensive first."""
    totals: dict[tuple[str, EventKind], list[int]] = {}
    for e in events:
        acc = totals.setdefault((e.name, e.kind), [0, 0])
        acc[0] += 1
        acc[1] += e.duration_ns
    grand = sum(total for _, total in totals.values())
    stats = [
        OperatorStat(name, kind, count, total, total / grand if grand else 0.0)
        for (name, kind), (count, total) in totals.items()
    ]
    return tuple(sorted(stats, key=lambda s: (-s.total_ns, s.name)))


def _row(name: str, kind: str, count: str, total: str, mean: str, share: str, width: int) -> str:
    return f"{name:<{width}}  {kind:<8}  {count:>6}  {total:>10}  {mean:>10}  {share:>6}"


def format_table(stats: Sequence[OperatorStat]) -> str:
    width = max([len("operator"), *(len(s.name) for s in stats)])
    lines = [_row("operator", "kind", "count", "total ms", "mean us", "share", width)]
    for s in stats:
        kind = s.kind.name.lower()
        total, mean = f"{s.total_ns / 1e6:.3f}", f"{s.mean_ns / 1e3:.2f}"
        lines.append(_row(s.name, kind, str(s.count), total, mean, f"{s.share:.1%}", width))
    total_ns = sum(s.total_ns for s in stats)
    count = sum(s.count for s in stats)
    lines.append(_row("total", "", str(count), f"{total_ns / 1e6:.3f}", "", "100%", width))
    return "\n".join(lines)


_NO_MATPLOTLIB = (
    "drawing the chart needs matplotlib, which the extra 'profile' installs: "
    "pip install 'etrt[profile]'"
)


def check_chart_support() -> None:
    """Fails before any profiling when the chart could not be drawn."""
    import importlib.util

    if importlib.util.find_spec("matplotlib") is None:
        raise EtrtError(_NO_MATPLOTLIB)


def write_chart(stats: Sequence[OperatorStat], path: Path, title: str) -> Path:
    """A horizontal bar per operator: total milliseconds, labelled with its share."""
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ModuleNotFoundError:
        raise EtrtError(_NO_MATPLOTLIB) from None
    shown = list(stats[:CHART_TOP])
    rest = stats[CHART_TOP:]
    labels = [s.name for s in shown]
    totals = [s.total_ns / 1e6 for s in shown]
    shares = [s.share for s in shown]
    if rest:
        labels.append(f"other ({len(rest)} operators)")
        totals.append(sum(s.total_ns for s in rest) / 1e6)
        shares.append(sum(s.share for s in rest))
    fig = Figure(figsize=(9, 1.2 + 0.4 * max(len(labels), 1)), layout="constrained")
    FigureCanvasAgg(fig)  # render without pyplot or a display
    ax = fig.subplots()
    positions = list(range(len(labels)))
    ax.barh(positions, totals, color="tab:blue")
    ax.set_yticks(positions, labels)
    ax.invert_yaxis()  # the most expensive on top
    for y, (total, share) in enumerate(zip(totals, shares, strict=True)):
        ax.annotate(f" {share:.1%}", (total, y), va="center", fontsize=8)
    ax.set_xlabel("total time (ms)")
    ax.set_title(title)
    ax.margins(x=0.15)
    if not path.parent.is_dir():
        raise EtrtError(f"cannot write {path}: directory {path.parent} does not exist")
    try:
        fig.savefig(path, format="png", dpi=100)
    except OSError as exc:
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
    return Profile(program, method, not input_paths, dump, etdump_path, summarize(dump))
