"""Which parameters of a long suite run in the CI gate (docs/TESTING.md): the gate runs a few
representative cases of each suite; `bash ci/long.sh SUITE` runs them all."""

from __future__ import annotations

from collections.abc import Collection, Iterable
from typing import Any

import pytest
from _pytest.mark import ParameterSet
from etpkg import testing

# The consumer suites verify on the oldest and the newest CMake of the matrix in the gate (the
# single-app tests build with testing.MODERN, 3.31); the versions between, both generators, with
# `ci/long.sh matrix`.
GATE_CMAKE = (testing.CMAKE_VERSIONS[0], testing.CMAKE_VERSIONS[-1])
REST_CMAKE = tuple(v for v in testing.CMAKE_VERSIONS if v not in GATE_CMAKE)


def gate_subset(values: Iterable[Any], gate: Collection[Any]) -> list[ParameterSet]:
    """`values` as pytest parameters; those not in `gate` are marked long. Every gate value must
    be among `values`, so a renamed case cannot drop out of the gate unnoticed."""
    values = list(values)
    missing = [g for g in gate if g not in values]
    assert not missing, f"gate cases that are not parameters: {missing}"
    return [
        pytest.param(v, marks=() if v in gate else pytest.mark.long)
        if not isinstance(v, tuple)
        else pytest.param(*v, marks=() if v in gate else pytest.mark.long)
        for v in values
    ]
