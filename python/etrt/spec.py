"""Resolve a model spec from the command line: a .pt2 file or a `module:factory` reference."""

from __future__ import annotations

import importlib
import importlib.util
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch.export import ExportedProgram

from .errors import SpecError


@dataclass(frozen=True)
class ModelSpec:
    """Either an exported program, or a model with its example inputs (and dynamic shapes)."""

    exported: ExportedProgram | None = None
    model: torch.nn.Module | None = None
    example_inputs: tuple[Any, ...] = ()
    dynamic_shapes: Any = None


def _load_pt2(path: Path) -> ModelSpec:
    try:
        ep = torch.export.load(str(path))
    except Exception as exc:
        raise SpecError(f"cannot load exported program {path}: {exc}") from exc
    return ModelSpec(exported=ep)


def _import_factory_module(ref: str) -> Any:
    if ref.endswith(".py") or "/" in ref or ref.startswith("."):
        path = Path(ref)
        if not path.is_file():
            raise SpecError(f"no such file: {ref}")
        name = f"_etrt_spec_{path.stem}"
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise SpecError(f"cannot import {ref}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        # Let the file import its neighbours (e.g. a models.py beside it).
        sys.path.insert(0, str(path.resolve().parent))
        try:
            spec.loader.exec_module(module)
        except Exception as exc:
            raise SpecError(f"importing {ref} failed: {type(exc).__name__}: {exc}") from exc
        finally:
            sys.path.remove(str(path.resolve().parent))
        return module
    try:
        return importlib.import_module(ref)
    except Exception as exc:
        raise SpecError(f"cannot import module {ref}: {type(exc).__name__}: {exc}") from exc


def _load_factory(text: str) -> ModelSpec:
    ref, _, attr = text.rpartition(":")
    if not ref or not attr:
        raise SpecError(f"bad spec {text!r}: expected FILE.py:factory or package.module:factory")
    module = _import_factory_module(ref)
    factory = getattr(module, attr, None)
    if not callable(factory):
        raise SpecError(f"{ref} has no callable {attr!r}")
    try:
        result = factory()
    except Exception as exc:
        raise SpecError(f"{text}() failed: {type(exc).__name__}: {exc}") from exc
    if not (isinstance(result, tuple) and len(result) in (2, 3)):
        raise SpecError(
            f"{text}() must return (model, example_inputs) or (model, example_inputs, "
            "dynamic_shapes)"
        )
    model, inputs, dynamic = result if len(result) == 3 else (*result, None)
    if not isinstance(model, torch.nn.Module):
        raise SpecError(f"{text}() returned {type(model).__name__}, not a torch.nn.Module")
    if isinstance(inputs, torch.Tensor):
        inputs = (inputs,)
    if not isinstance(inputs, (tuple, list)):
        raise SpecError(f"{text}() returned example inputs of type {type(inputs).__name__}")
    return ModelSpec(model=model, example_inputs=tuple(inputs), dynamic_shapes=dynamic)


def load_spec(text: str) -> ModelSpec:
    """SPEC is a torch.export.save'd .pt2 file, FILE.py:factory, or package.module:factory."""
    path = Path(text)
    if text.endswith(".pt2"):
        if not path.is_file():
            raise SpecError(f"no such file: {text}")
        return _load_pt2(path)
    if ":" not in text:
        raise SpecError(
            f"bad spec {text!r}: expected a .pt2 file, FILE.py:factory or module:factory"
        )
    return _load_factory(text)
