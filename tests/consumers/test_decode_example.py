"""examples/decode, the C++ text generator, built against the installed etrt wheel as the README
says (find_package with `python -m etrt --cmake-prefix-path`), generates the same greedy tokens
as eager PyTorch for GPT-2, Llama (transformers, static KV cache) and the hand-written decoder,
across a state reset, and refuses what it cannot do in one error line."""

from __future__ import annotations

from pathlib import Path

import decoders
import pytest
from etpkg import testing
from etpkg_fixtures import REPO_ROOT

pytestmark = pytest.mark.slow

EXAMPLE = REPO_ROOT / "examples" / "decode"
CMAKE_CACHE = REPO_ROOT / "build" / "cmake-venvs"
PROMPT = [5, 17, 42, 8, 99]
NEW_TOKENS = 20


@pytest.fixture(scope="module")
def app(
    etrt_wheel: Path, tmp_path_factory: pytest.TempPathFactory
) -> tuple[testing.Workspace, Path]:
    ws = testing.prepare(etrt_wheel, tmp_path_factory.mktemp("decode-example"), CMAKE_CACHE)
    tool = ws.tool(testing.MODERN[0])
    prefix = testing.run(
        [ws.venv / "bin" / "python", "-m", "etrt", "--cmake-prefix-path"], env=ws.env(tool)
    ).stdout.strip()
    build = ws.root / "decode-build"
    env = ws.env(tool)
    testing.run(
        [tool.cmake, "-S", EXAMPLE, "-B", build, "-G", "Ninja", f"-DCMAKE_PREFIX_PATH={prefix}",
         "-DCMAKE_BUILD_TYPE=Release"],
        env=env,
    )  # fmt: skip
    testing.run([tool.cmake, "--build", build], env=env)
    return ws, build / "decode"


@pytest.fixture(scope="module", params=decoders.NAMES)
def decoder(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, list[int]]:
    """(program, eager's greedy tokens for PROMPT)."""
    name = request.param
    model, reference = decoders.make(name)
    path = decoders.export(model, name).save(tmp_path_factory.mktemp(name) / f"{name}.etrt")
    return path, decoders.greedy(decoders.eager_step(reference), PROMPT, NEW_TOKENS)


def _run(app: tuple[testing.Workspace, Path], *args: object) -> tuple[int, str, str]:
    ws, exe = app
    proc = testing.run([exe, *map(str, args)], env=ws.env(ws.tool(testing.MODERN[0])), check=False)
    return proc.returncode, proc.stdout, proc.stderr


def test_app_generates_eagers_tokens(
    app: tuple[testing.Workspace, Path], decoder: tuple[Path, list[int]]
) -> None:
    program, want = decoder
    rc, out, err = _run(app, program, "-n", NEW_TOKENS, "--runs", 2, "--stats", *PROMPT)
    assert rc == 0, err
    assert [int(t) for t in out.split()] == want
    assert len(set(want)) >= 5  # eager does not repeat one token: the comparison says something
    assert "prefill: 5 tokens in " in err and f"decode: {NEW_TOKENS - 1} tokens in " in err


def test_app_refuses_too_long_a_sequence_in_one_line(
    app: tuple[testing.Workspace, Path], decoder: tuple[Path, list[int]]
) -> None:
    program, _ = decoder
    rc, out, err = _run(app, program, "-n", decoders.MAX_SEQ, *PROMPT)
    assert rc == 1 and out == ""
    assert err == (
        f"decode: error: the prompt (5 tokens) and {decoders.MAX_SEQ} new tokens exceed the "
        f"program's longest sequence, {decoders.MAX_SEQ - 1}\n"
    )
    rc, _, err = _run(app, program, "-n", 2, 5, decoders.VOCAB)
    assert rc == 1 and err.count("\n") == 1 and "out of range" in err, err
