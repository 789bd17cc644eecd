"""Run in the consumer venv: loads each discovery entry point of the distribution argv[1] in the
groups argv[2:] the way scikit-build-core and pkgconf do (import the module, take its dir)."""

from __future__ import annotations

import importlib.metadata
import importlib.resources
import json
import sys

out: list[dict[str, str | None]] = []
for group in sys.argv[2:]:
    for ep in importlib.metadata.distribution(sys.argv[1]).entry_points.select(group=group):
        where: str | None = None
        error: str | None = None
        try:
            where = str(importlib.resources.files(ep.load()))
        except Exception as exc:
            error = f"{type(exc).__name__}: {exc}"
        out.append(
            {"group": group, "name": ep.name, "value": ep.value, "dir": where, "error": error}
        )
print(json.dumps(out))
