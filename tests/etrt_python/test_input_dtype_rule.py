"""The binding converts an input's dtype by numpy's same-kind rule, and its refusal says so."""

from __future__ import annotations

import numpy as np
import pytest
from etrt.runtime import EtrtRuntimeError, IOSpec, check_dtype

FLOAT32 = IOSpec("tensor", np.dtype("float32"), (2,))
INT32 = IOSpec("tensor", np.dtype("int32"), (2,))
BOOL = IOSpec("tensor", np.dtype("bool"), (2,))


@pytest.mark.parametrize(
    ("spec", "given"),
    [
        (FLOAT32, "float64"),
        (FLOAT32, "int64"),
        (FLOAT32, "bool"),
        (INT32, "int64"),
        (INT32, "uint8"),
    ],
)
def test_same_kind_or_higher_kind_converts(spec: IOSpec, given: str) -> None:
    check_dtype(spec, np.dtype(given), 0)  # narrowing within a kind, or up a kind: accepted


@pytest.mark.parametrize(
    ("spec", "given", "words"),
    [
        (FLOAT32, "complex64", "never complex to floating"),
        (INT32, "float16", "never floating to signed integer"),
        (BOOL, "int8", "never signed integer to bool"),
    ],
)
def test_refusal_states_the_same_kind_rule(spec: IOSpec, given: str, words: str) -> None:
    with pytest.raises(EtrtRuntimeError) as info:
        check_dtype(spec, np.dtype(given), 3)
    assert info.value.code == "InvalidArgument"
    message = str(info.value)
    assert f"input 3: expected {spec.dtype}, got {given}" in message
    assert "(inputs convert by the same-kind rule: within a kind or to a higher one," in message
    assert words in message and "safely" not in message
