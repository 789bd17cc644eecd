"""etpkg: turn a Conan package of a native SDK into a manylinux wheel that is also a C++ SDK."""

from __future__ import annotations

__version__ = "0.1.0"
