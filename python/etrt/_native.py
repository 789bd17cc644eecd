"""Finds and loads etrt's shared libraries for the ctypes binding, once per process.

The wheel's own `etrt/lib/` comes first (through the generated `etrt._etpkg`); without it
(a source checkout), `ETRT_LIBRARY_DIR` names a directory holding libetrt.so, e.g. the `lib/` of
the Conan package or a CMake build directory. libetrt.so is loaded first, then every other
component library present, all with RTLD_GLOBAL: the components' static initializers register
into the one libetrt.so, so Python and any C++ in the process share one registry.
"""

from __future__ import annotations

import ctypes
import importlib
import logging
import os
import threading
from dataclasses import dataclass
from pathlib import Path

from .errors import EtrtError

log = logging.getLogger(__name__)

ENV_VAR = "ETRT_LIBRARY_DIR"
RUNTIME_LIBRARY = "libetrt.so"
# Component libraries beyond the runtime, in load order: the thread pool attaches before any
# kernel can run, then the registration-only libraries.
COMPONENT_LIBRARIES = (
    "libetrt_threadpool.so",
    "libetrt_kernels_optimized.so",
    "libetrt_backend_xnnpack.so",
    "libetrt_etdump.so",
)
C_API_VERSION = 1


class LibraryNotFoundError(EtrtError):
    """etrt's shared libraries cannot be found or loaded."""


@dataclass(frozen=True)
class NativeLibraries:
    lib_dir: Path
    runtime: ctypes.CDLL
    # Every library loaded, runtime first: what this process now shares with C++ callers.
    loaded: tuple[Path, ...]


def _wheel_layout() -> tuple[Path, tuple[str, ...]] | None:
    """(lib dir, library file names) of the installed wheel, or None outside a wheel."""
    try:
        sdk = importlib.import_module("etrt._etpkg")
    except ModuleNotFoundError:
        return None
    files = tuple(f for names in sdk.COMPONENTS.values() for f in names)
    return Path(sdk.lib_dir()), files


def locate() -> tuple[Path, tuple[str, ...]]:
    """The directory to load from and the library files in it, in load order."""
    wheel = _wheel_layout()
    if wheel is not None:
        lib_dir, files = wheel
        where = "the installed etrt wheel"
    else:
        env = os.environ.get(ENV_VAR)
        if not env:
            raise LibraryNotFoundError(
                f"etrt's runtime library is not available: etrt is not installed from its wheel "
                f"and {ENV_VAR} is not set (point it at the lib/ directory of an etrt build)"
            )
        lib_dir, files = Path(env), ()
        where = f"{ENV_VAR}={env}"
    if not (lib_dir / RUNTIME_LIBRARY).is_file():
        raise LibraryNotFoundError(f"no {RUNTIME_LIBRARY} in {lib_dir} (from {where})")
    ordered = [RUNTIME_LIBRARY]
    ordered += [f for f in COMPONENT_LIBRARIES if (lib_dir / f).is_file()]
    ordered += [f for f in files if f not in ordered and (lib_dir / f).is_file()]
    return lib_dir, tuple(ordered)


_lock = threading.Lock()
_loaded: NativeLibraries | None = None


def libraries() -> NativeLibraries:
    """Loads the libraries on first use; later calls return the same handles."""
    global _loaded
    with _lock:
        if _loaded is None:
            _loaded = _load()
        return _loaded


def _load() -> NativeLibraries:
    lib_dir, files = locate()
    handles: list[ctypes.CDLL] = []
    paths: list[Path] = []
    for name in files:
        path = lib_dir / name
        try:
            handles.append(ctypes.CDLL(str(path), mode=ctypes.RTLD_GLOBAL))
        except OSError as exc:
            raise LibraryNotFoundError(f"cannot load {path}: {exc}") from exc
        log.debug("loaded %s", path)
        paths.append(path)
    runtime = handles[0]
    try:
        _declare(runtime)
    except AttributeError as exc:
        raise LibraryNotFoundError(
            f"{lib_dir / RUNTIME_LIBRARY} has no etrt C ABI ({exc}); it is older than this binding"
        ) from exc
    version = int(runtime.etrt_c_api_version())
    if version != C_API_VERSION:
        raise LibraryNotFoundError(
            f"{lib_dir / RUNTIME_LIBRARY} implements C ABI version {version}, "
            f"this binding needs {C_API_VERSION}"
        )
    return NativeLibraries(lib_dir, runtime, tuple(paths))


_Status = ctypes.c_int32
_Ptr = ctypes.c_void_p
_SizeP = ctypes.POINTER(ctypes.c_size_t)
_I32P = ctypes.POINTER(ctypes.c_int32)
_I64PP = ctypes.POINTER(ctypes.POINTER(ctypes.c_int64))

# name -> (restype, argtypes): the whole of include/etrt/runtime/c_api.h.
_SIGNATURES: dict[str, tuple[object, list[object]]] = {
    "etrt_c_api_version": (ctypes.c_int32, []),
    "etrt_version_string": (ctypes.c_char_p, []),
    "etrt_last_error": (ctypes.c_char_p, []),
    "etrt_status_name": (ctypes.c_char_p, [_Status]),
    "etrt_num_registered_kernels": (ctypes.c_size_t, []),
    "etrt_registered_kernel_name": (ctypes.c_char_p, [ctypes.c_size_t]),
    "etrt_num_registered_backends": (ctypes.c_size_t, []),
    "etrt_registered_backend_name": (ctypes.c_char_p, [ctypes.c_size_t]),
    "etrt_set_random_seed": (None, [ctypes.c_uint64]),
    "etrt_cpu_isa": (ctypes.c_char_p, []),
    "etrt_kernel_isa": (ctypes.c_char_p, []),
    "etrt_max_isa": (_Status, [ctypes.POINTER(ctypes.c_char_p)]),
    "etrt_set_max_isa": (_Status, [ctypes.c_char_p]),
    "etrt_module_open": (_Status, [ctypes.c_char_p, ctypes.POINTER(_Ptr)]),
    "etrt_module_open_with_data": (
        _Status,
        [ctypes.c_char_p, ctypes.c_char_p, ctypes.POINTER(_Ptr)],
    ),
    "etrt_module_set_max_memory_bytes": (_Status, [_Ptr, ctypes.c_uint64]),
    "etrt_module_free": (None, [_Ptr]),
    "etrt_module_num_methods": (_Status, [_Ptr, _SizeP]),
    "etrt_module_method_name": (_Status, [_Ptr, ctypes.c_size_t, ctypes.POINTER(ctypes.c_char_p)]),
    "etrt_module_method": (_Status, [_Ptr, ctypes.c_char_p, ctypes.POINTER(_Ptr)]),
    "etrt_method_num_inputs": (_Status, [_Ptr, _SizeP]),
    "etrt_method_num_outputs": (_Status, [_Ptr, _SizeP]),
    "etrt_method_input_kind": (_Status, [_Ptr, ctypes.c_size_t, _I32P]),
    "etrt_method_output_kind": (_Status, [_Ptr, ctypes.c_size_t, _I32P]),
    "etrt_method_input_meta": (_Status, [_Ptr, ctypes.c_size_t, _I32P, _SizeP, _I64PP]),
    "etrt_method_output_meta": (_Status, [_Ptr, ctypes.c_size_t, _I32P, _SizeP, _I64PP]),
    "etrt_method_input_bounds": (
        _Status,
        [_Ptr, ctypes.c_size_t, _I32P, _SizeP, _I64PP, _I64PP],
    ),
    "etrt_method_output_dynamic": (_Status, [_Ptr, ctypes.c_size_t, _I32P]),
    "etrt_method_num_states": (_Status, [_Ptr, _SizeP]),
    "etrt_method_reset_state": (_Status, [_Ptr]),
    "etrt_method_set_input_tensor": (
        _Status,
        [
            _Ptr,
            ctypes.c_size_t,
            _Ptr,
            ctypes.c_int32,
            ctypes.c_size_t,
            ctypes.POINTER(ctypes.c_int64),
        ],
    ),
    "etrt_method_check_input_tensor": (
        _Status,
        [_Ptr, ctypes.c_size_t, ctypes.c_int32, ctypes.c_size_t, ctypes.POINTER(ctypes.c_int64)],
    ),
    "etrt_method_set_input_int": (_Status, [_Ptr, ctypes.c_size_t, ctypes.c_int64]),
    "etrt_method_set_input_double": (_Status, [_Ptr, ctypes.c_size_t, ctypes.c_double]),
    "etrt_method_set_input_bool": (_Status, [_Ptr, ctypes.c_size_t, ctypes.c_int32]),
    "etrt_method_execute": (_Status, [_Ptr]),
    "etrt_method_output_tensor": (
        _Status,
        [_Ptr, ctypes.c_size_t, _I32P, _SizeP, _I64PP, _I64PP, ctypes.POINTER(_Ptr)],
    ),
    "etrt_method_output_int": (_Status, [_Ptr, ctypes.c_size_t, ctypes.POINTER(ctypes.c_int64)]),
    "etrt_method_output_double": (
        _Status,
        [_Ptr, ctypes.c_size_t, ctypes.POINTER(ctypes.c_double)],
    ),
    "etrt_method_output_bool": (_Status, [_Ptr, ctypes.c_size_t, _I32P]),
}


def _declare(lib: ctypes.CDLL) -> None:
    for name, (restype, argtypes) in _SIGNATURES.items():
        fn = getattr(lib, name)
        fn.restype = restype
        fn.argtypes = argtypes
