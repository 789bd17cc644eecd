"""Typed-as-Any access to the flatc-generated schema modules (they have no annotations)."""

from __future__ import annotations

import importlib
from typing import Any

fb: Any = importlib.import_module("etrt._schema.program_generated")
dm: Any = importlib.import_module("etrt._schema.data_map_generated")
flatbuffers: Any = importlib.import_module("flatbuffers")
