"""Real conan-center-index recipes through etpkg, each step a test (README.md here).

The gate runs the cases marked `gate` (`-m corpus` without `long`); `pytest -m corpus`
runs every case. Each case builds its Conan package and its wheel once per session; the
steps after that reuse the wheel. Work area: build/corpus (sources, Conan home, case dirs), or
$ETPKG_CORPUS_WORK; the source cache: $ETPKG_CORPUS_SOURCES or <work area>/sources.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from corpus import runner
from corpus.cases import CASES, Case

_results: dict[str, runner.CaseResult] = {}


@pytest.fixture(scope="session")
def corpus() -> runner.Corpus:
    work = runner.Corpus(
        Path(os.environ.get("ETPKG_CORPUS_WORK") or runner.REPO / "build" / "corpus")
    )
    work.setup()
    return work


def _step(corpus: runner.Corpus, case: Case, step: str) -> runner.StepResult:
    if case.name not in _results:
        _results[case.name] = corpus.run_case(case)
    result = _results[case.name].steps[step]
    log = corpus.work / "cases" / case.name / "logs" / f"{step}.log"
    assert result.ok, f"{case.name} {step}: {result.detail} (log: {log})"
    return result


GATE = [c for c in CASES if c.gate]
LONG = [c for c in CASES if not c.gate]


@pytest.mark.corpus
@pytest.mark.parametrize("step", runner.STEPS)
@pytest.mark.parametrize("case", GATE, ids=[c.name for c in GATE])
def test_real_recipe_step_passes_against_the_wheel_alone(
    corpus: runner.Corpus, case: Case, step: str
) -> None:
    _step(corpus, case, step)


@pytest.mark.long
@pytest.mark.corpus
@pytest.mark.parametrize("step", runner.STEPS)
@pytest.mark.parametrize("case", LONG, ids=[c.name for c in LONG])
def test_whole_corpus_step_passes_against_the_wheel_alone(
    corpus: runner.Corpus, case: Case, step: str
) -> None:
    _step(corpus, case, step)


@pytest.mark.corpus
def test_gate_subset_covers_eight_shapes() -> None:
    # Five cases hold every shape of the gate's list; zlib itself is built by libpng's case
    # (its requirement) and cross-built by test_cross.py.
    shapes = {s for c in GATE for s in c.shapes}
    assert len(GATE) >= 5 and len(shapes) >= 8, (len(GATE), sorted(shapes))
    assert {"requires", "executables", "static", "header-only", "components"} <= shapes, shapes
    assert len({c.recipe for c in CASES}) >= 25


@pytest.mark.corpus
def test_every_recipe_keeps_its_upstream_package_info_and_a_checked_debian_source() -> None:
    for case in CASES:
        recipe = runner.load_recipe(case.recipe)
        assert len(recipe.sha256) == 64 and recipe.debian.count("=") == 1, case.name
        text = (recipe.folder / "conanfile.py").read_text()
        assert "def package_info(self):" in text and "_debian_orig_source(self" in text
        assert 'conan_data["sources"][self.version],' not in text, case.name


@pytest.mark.corpus
def test_deb_src_lines_follow_the_machines_own_apt_sources(tmp_path: Path) -> None:
    (tmp_path / "sources.list.d").mkdir()
    (tmp_path / "sources.list").write_text(
        "# old style\ndeb http://mirror.test/debian bookworm main\n"
    )
    (tmp_path / "sources.list.d" / "debian.sources").write_text(
        "Types: deb\nURIs: http://mirror.test/debian\nSuites: bookworm bookworm-updates\n"
        "Components: main\nSigned-By: /k.gpg\n\n"
        "Types: deb-src\nURIs: http://other.test/x\nSuites: y\nComponents: main\n"
    )
    (tmp_path / "sources.list.d" / "vendor.list.disabled").write_text(
        "deb http://no.test/ x main\n"
    )
    assert runner.deb_src_lines(tmp_path).splitlines() == [
        "deb-src http://mirror.test/debian bookworm main",
        "deb-src [signed-by=/k.gpg] http://mirror.test/debian bookworm main",
        "deb-src [signed-by=/k.gpg] http://mirror.test/debian bookworm-updates main",
    ]
    (tmp_path / "sources.list").unlink()
    (tmp_path / "sources.list.d" / "debian.sources").unlink()
    with pytest.raises(runner.CorpusError, match="no deb entries"):
        runner.deb_src_lines(tmp_path)
