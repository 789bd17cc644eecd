"""Language-model decoding end to end from Python: GPT-2 and Llama (transformers, static KV
cache, random weights) and the hand-written KV-cache decoder, exported once with a dynamic
sequence dimension, run prompt first (prefill) then token by token; greedy tokens are eager's.
The C++ side (examples/decode built against the installed wheel) is in tests/consumers."""

from __future__ import annotations

from collections.abc import Iterator

import decoders
import etrt
import numpy as np
import pytest
import runtime_build
import torch
from suites import gate_subset

pytestmark = [pytest.mark.slow, pytest.mark.models]

PROMPT = [5, 17, 42, 8, 99]
NEW_TOKENS = 24


@pytest.fixture(scope="module")
def lib() -> Iterator[None]:
    runtime_build.python_runtime()
    yield


@pytest.fixture(
    scope="module",
    params=gate_subset(decoders.NAMES + decoders.LONG_NAMES, {"handwritten", "llama"}),
)
def decoder(
    request: pytest.FixtureRequest, lib: None, tmp_path_factory: pytest.TempPathFactory
) -> tuple[str, etrt.Method, torch.nn.Module]:
    name = request.param
    model, reference = decoders.make(name)
    program = decoders.export(model, name)
    assert program.missing_ops == ()
    path = program.save(tmp_path_factory.mktemp(name) / f"{name}.etrt")
    return name, etrt.load(path).method(), reference


def _step(method: etrt.Method) -> decoders.Step:
    def step(tokens: np.ndarray, positions: np.ndarray) -> np.ndarray:
        (logits,) = method(tokens, positions)
        assert isinstance(logits, np.ndarray)
        return logits

    return step


def test_greedy_tokens_are_eagers(decoder: tuple[str, etrt.Method, torch.nn.Module]) -> None:
    name, method, reference = decoder
    assert method.num_states >= 4  # keys and values of two layers at least
    tokens, positions = method.inputs
    assert tokens.min_shape == (1, 1) and tokens.max_shape == (1, decoders.MAX_SEQ - 1)
    assert positions.min_shape == (1,) and positions.max_shape == (decoders.MAX_SEQ - 1,)
    want = decoders.greedy(decoders.eager_step(reference), PROMPT, NEW_TOKENS)
    got = decoders.greedy(_step(method), PROMPT, NEW_TOKENS)
    print(f"{name}: {got}")
    assert len(set(want)) >= 5, f"{name}: eager repeats itself, the comparison would say little"
    assert got == want


def test_prefill_and_decode_logits_match(decoder: tuple[str, etrt.Method, torch.nn.Module]) -> None:
    """A new sequence after reset: prompt logits, then each step's, as eager's."""
    name, method, reference = decoder
    method.reset()
    eager = decoders.eager_step(reference)
    prompt = np.array([PROMPT[::-1]], np.int64)
    positions = np.arange(len(PROMPT), dtype=np.int64)
    steps = [(prompt, positions)] + [
        (np.array([[t]], np.int64), np.array([len(PROMPT) + i], np.int64))
        for i, t in enumerate([3, 1, 4, 1, 5])
    ]
    for tokens, pos in steps:
        got, want = _step(method)(tokens, pos), eager(tokens, pos)
        assert got.shape == want.shape == (1, tokens.shape[1], decoders.VOCAB)
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4, err_msg=name)


def test_program_outlives_one_generation(
    decoder: tuple[str, etrt.Method, torch.nn.Module],
) -> None:
    """Two generations in a row with a reset between them give what two fresh models give."""
    name, method, _ = decoder
    _, fresh = decoders.make(name)
    method.reset()
    first = decoders.greedy(_step(method), PROMPT, 6)
    method.reset()
    second = decoders.greedy(_step(method), [7, 7, 1], 6)
    assert first == decoders.greedy(decoders.eager_step(fresh), PROMPT, 6)
    _, fresh = decoders.make(name)
    assert second == decoders.greedy(decoders.eager_step(fresh), [7, 7, 1], 6)
