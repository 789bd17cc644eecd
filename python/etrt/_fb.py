"""Typed-as-Any access to the flatc-generated schema module (it has no annotations)."""

from __future__ import annotations

import importlib
from typing import Any

fb: Any = importlib.import_module("etrt._schema.program_generated")
flatbuffers: Any = importlib.import_module("flatbuffers")
