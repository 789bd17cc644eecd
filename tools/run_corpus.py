"""Run the real-recipe corpus (tests/corpus) and print its table.

    source ci/env.sh && python tools/run_corpus.py                  # every case
    python tools/run_corpus.py zlib fmt --steps create,wheelify     # some cases, some steps
    python tools/run_corpus.py --gate                                # the CI gate's subset
    python tools/run_corpus.py --fresh --markdown FILE   # new Conan cache; the table to FILE

Exit status 0 when every case passes every step run, 1 otherwise.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from corpus import runner
from corpus.cases import CASES, by_name


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="tools/run_corpus.py", description=(__doc__ or "").splitlines()[0]
    )
    parser.add_argument("cases", nargs="*", help="case names (default: all)")
    parser.add_argument("--gate", action="store_true", help="only the CI gate's cases")
    parser.add_argument(
        "--steps",
        default=",".join(runner.STEPS),
        help=f"comma-separated subset of {','.join(runner.STEPS)}",
    )
    parser.add_argument(
        "--work",
        type=Path,
        default=runner.REPO / "build" / "corpus",
        help="work area: Conan home, source cache, per-case dirs",
    )
    parser.add_argument(
        "--fresh",
        action="store_true",
        help="start from an empty Conan cache (every package built again)",
    )
    parser.add_argument("--markdown", type=Path, help="also write the table to this file")
    args = parser.parse_args(argv)
    steps = args.steps.split(",")
    unknown = set(steps) - set(runner.STEPS)
    if unknown:
        parser.error(f"unknown steps {sorted(unknown)}")
    try:
        cases = [by_name(n) for n in args.cases] if args.cases else list(CASES)
    except KeyError as e:
        parser.error(str(e.args[0]))
    if args.gate:
        cases = [c for c in cases if c.gate]
    corpus = runner.Corpus(args.work, fresh=args.fresh)
    try:
        corpus.setup()
    except runner.CorpusError as e:
        print(f"corpus: {e}", file=sys.stderr)
        return 2
    results = []
    start = time.monotonic()
    for case in cases:
        try:
            result = corpus.run_case(case, steps)
        except runner.CorpusError as e:
            print(f"corpus: {case.name}: {e}", file=sys.stderr)
            return 2
        results.append(result)
        cells = " ".join(
            f"{s.step}={'ok' if s.ok else 'FAIL'}:{s.seconds:.0f}" for s in result.steps.values()
        )
        print(f"{case.name:<18} {result.seconds:6.0f}s {cells}", flush=True)
    text = runner.table(results)
    total = f"Total {time.monotonic() - start:.0f} s."
    print()
    print(text)
    print(total)
    fails = runner.failures(results)
    if fails:
        print("\nFailures (logs under " + str(args.work / "cases") + "/CASE/logs/):")
        print(fails)
    if args.markdown:
        args.markdown.write_text(text + "\n" + total + "\n\n" + fails + "\n")
    return 0 if all(r.ok for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
