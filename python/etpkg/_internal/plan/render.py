"""Rendering the template files in plan/templates/ (Jinja2, strict: an unknown name fails)."""

from __future__ import annotations

from collections.abc import Callable
from importlib import resources
from typing import Any

import jinja2


def template_text(name: str) -> str:
    path = resources.files("etpkg._internal.plan") / "templates" / name
    return path.read_text(encoding="utf-8")


def render(
    name: str, context: dict[str, Any], filters: dict[str, Callable[..., Any]] | None = None
) -> str:
    env = jinja2.Environment(
        loader=jinja2.FunctionLoader(template_text),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
    )
    env.filters["pyrepr"] = repr
    env.filters.update(filters or {})
    return env.get_template(name).render(context)
