"""How a library is named in a wheel and how a consumer keeps one the linker would drop.

The one place for both rules; the CMake config, the pkg-config files, the generated Python
helper, staging and `verify` all use these functions.

- Every library of a component ships as one real file `<pkg>/lib/lib<name>.so` whose SONAME
  is that file name (wheels hold no symlinks, so no versioned chain), or, built static, as
  `<pkg>/lib/lib<name>.a`.
- A registration-only library exports nothing a consumer references, so the linker would
  drop it: a shared one under --as-needed, an archive's objects always. It is linked inside
  one scoped token, `--push-state,--no-as-needed,<path>,--pop-state` (an archive:
  `--whole-archive` instead of `--no-as-needed`), never split into pieces (pkg-config
  deduplicates identical fragments across modules, which would remove a second retention).
"""

from __future__ import annotations

import re

_LIBRARY_FILE = re.compile(r"lib(.+)\.(so|a)")


def library_file(lib: str, *, static: bool = False) -> str:
    """The file (and SONAME) of the library the linker knows as `lib` (-l<lib>)."""
    return f"lib{lib}.a" if static else f"lib{lib}.so"


def library_name(file_name: str) -> str:
    """Inverse of library_file: "libx.so" and "libx.a" -> "x"."""
    match = _LIBRARY_FILE.fullmatch(file_name)
    if match is None:
        raise ValueError(f"{file_name!r} is not a library file name lib<name>.so or lib<name>.a")
    return match.group(1)


def is_static_file(file_name: str) -> bool:
    return file_name.endswith(".a")


RETAIN_BEGIN = "--push-state,--no-as-needed"
RETAIN_STATIC_BEGIN = "--push-state,--whole-archive"
RETAIN_END = "--pop-state"


def retained(paths: list[str] | tuple[str, ...], *, static: bool = False) -> str:
    """Linker options (comma-separated, for -Wl, or LINKER:) that keep these files linked."""
    return ",".join([RETAIN_STATIC_BEGIN if static else RETAIN_BEGIN, *paths, RETAIN_END])


def retained_flag(paths: list[str] | tuple[str, ...], *, static: bool = False) -> str:
    """The same as one compiler-driver argument: -Wl,--push-state,--no-as-needed,...,--pop-state."""
    return "-Wl," + retained(paths, static=static)
