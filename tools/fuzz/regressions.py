"""The committed regression corpus of the fuzzers (tools/fuzz/regressions/TARGET/), which
run.sh copies into every working corpus and tests/etrt_cpp/test_fuzz.py replays:

    python tools/fuzz/regressions.py            # (re)writes the crafted-* inputs
    python tools/fuzz/regressions.py --check    # fails unless the committed ones are current

Two kinds of file: `crafted-<case>` are tests/hostile_cases.py's inputs (one per defect class,
with the error each must give there), written by this script so both stay the same; `found-*`
are inputs the fuzzers found crashing, minimized and kept by tools/fuzz/keep.sh.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "python")]
import hostile_cases  # noqa: E402

REGRESSIONS = ROOT / "tools" / "fuzz" / "regressions"
SUFFIX = {"program": "etrt", "data_map": "ptd", "xnnpack": "xnnpack"}


def crafted() -> dict[Path, bytes]:
    cases = {
        "program": hostile_cases.program_cases(),
        "data_map": hostile_cases.data_map_cases(),
        "xnnpack": hostile_cases.blob_cases(),
    }
    return {
        REGRESSIONS / target / f"crafted-{name}.{SUFFIX[target]}": data
        for target, by_name in cases.items()
        for name, data in by_name.items()
    }


def main(check: bool) -> int:
    want = crafted()
    have = {p: p.read_bytes() for p in REGRESSIONS.glob("*/crafted-*")}
    stale = sorted(str(p.relative_to(ROOT)) for p in set(have) - set(want))
    differ = sorted(str(p.relative_to(ROOT)) for p, data in want.items() if have.get(p) != data)
    if check:
        for path in stale:
            print(f"{path}: no longer a case of tests/hostile_cases.py", file=sys.stderr)
        for path in differ:
            print(f"{path}: missing or out of date", file=sys.stderr)
        if stale or differ:
            print("run: python tools/fuzz/regressions.py", file=sys.stderr)
            return 1
        return 0
    for path in set(have) - set(want):
        path.unlink()
    for path, data in want.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    print(f"{len(want)} crafted inputs in {REGRESSIONS.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    if sys.argv[1:] not in ([], ["--check"]):
        sys.exit("usage: regressions.py [--check]")
    sys.exit(main(sys.argv[1:] == ["--check"]))
