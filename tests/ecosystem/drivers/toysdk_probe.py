"""Run in the consumer venv: what the toysdk probe extension sees, as one JSON line."""

from __future__ import annotations

import json

import ecosystem_probe as probe

print(
    json.dumps(
        {
            "api": probe.api_version(),
            "plugins": probe.plugin_count(),
            "toy_plugin": probe.has_plugin("toy_plugin"),
            "compressed": probe.compressed_size("hello " * 10),
            "loaded": probe.loaded(),
        }
    )
)
