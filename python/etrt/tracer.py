"""The profiler from Python: an ETDumpGen of libetrt_etdump.so attached to runtime methods.

    with etrt.tracer.ETDumpTracer(record_shapes=True) as tracer:
        method = etrt.load("model.etrt").method()
        tracer.attach(method)
        method(x)
        tracer.detach(method)
        tracer.write("model.etdump")        # read it back with etrt.etdump.load

Goes through the same shared libraries a C++ app links (etrt_etdump_* of etdump_c.h, and
etrt_method_set_event_tracer of c_api.h), loaded once by etrt._native.
"""

from __future__ import annotations

import ctypes
from os import PathLike, fsencode
from pathlib import Path

from . import _native
from .errors import EtrtError
from .runtime import EtrtRuntimeError, Method
from .runtime import _check as check_status

ETDUMP_LIBRARY = "libetrt_etdump.so"

_Ptr = ctypes.c_void_p
_SIGNATURES: dict[str, tuple[object, list[object]]] = {
    "etrt_etdump_new": (
        ctypes.c_int32,
        [ctypes.c_size_t, ctypes.c_size_t, ctypes.c_int32, ctypes.POINTER(_Ptr)],
    ),
    "etrt_etdump_free": (None, [_Ptr]),
    "etrt_etdump_tracer": (_Ptr, [_Ptr]),
    "etrt_etdump_num_runs": (ctypes.c_size_t, [_Ptr]),
    "etrt_etdump_num_events": (ctypes.c_size_t, [_Ptr]),
    "etrt_etdump_dropped_events": (ctypes.c_size_t, [_Ptr]),
    "etrt_etdump_reset": (None, [_Ptr]),
    "etrt_etdump_write": (ctypes.c_int32, [_Ptr, ctypes.c_char_p]),
    "etrt_etdump_last_error": (ctypes.c_char_p, []),
}


def _etdump_library() -> ctypes.CDLL:
    libs = _native.libraries()
    path = next((p for p in libs.loaded if p.name == ETDUMP_LIBRARY), None)
    if path is None:
        raise _native.LibraryNotFoundError(
            f"the profiler needs {ETDUMP_LIBRARY}, which is not in {libs.lib_dir}"
        )
    lib = ctypes.CDLL(str(path), mode=ctypes.RTLD_GLOBAL)  # already loaded: the same handle
    try:
        for name, (restype, argtypes) in _SIGNATURES.items():
            fn = getattr(lib, name)
            fn.restype, fn.argtypes = restype, argtypes
        attach = libs.runtime.etrt_method_set_event_tracer
    except AttributeError as exc:
        raise _native.LibraryNotFoundError(
            f"{libs.lib_dir} has no profiler C ABI ({exc}); it is older than this binding"
        ) from exc
    attach.restype, attach.argtypes = ctypes.c_int32, [_Ptr, _Ptr]
    return lib


class ETDumpTracer:
    """Records every run, kernel call and delegate call of the methods it is attached to.

    Memory is reserved up front (`max_events`, `max_runs`); what does not fit is dropped and
    counted in `dropped_events`. Detach it from every method before closing it.
    """

    def __init__(self, max_events: int = 0, max_runs: int = 0, record_shapes: bool = False) -> None:
        self._lib = _etdump_library()
        handle = ctypes.c_void_p()
        self._check(
            self._lib.etrt_etdump_new(
                max_events, max_runs, int(record_shapes), ctypes.byref(handle)
            )
        )
        self._handle: int | None = handle.value
        self._attached: list[Method] = []

    def _check(self, status: int) -> None:
        if status != 0:
            message = (self._lib.etrt_etdump_last_error() or b"").decode(errors="replace")
            code, _, text = message.partition(": ")
            raise EtrtRuntimeError(code or str(status), text or message or f"status {status}")

    def _live(self) -> int:
        if self._handle is None:
            raise EtrtError("the tracer is closed")
        return self._handle

    def attach(self, method: Method) -> None:
        tracer = self._lib.etrt_etdump_tracer(self._live())
        runtime = _native.libraries().runtime
        with method._use() as handle:  # same package: the open method's handle
            check_status(runtime.etrt_method_set_event_tracer(handle, tracer))
        self._attached.append(method)

    def detach(self, method: Method) -> None:
        runtime = _native.libraries().runtime
        with method._use() as handle:
            check_status(runtime.etrt_method_set_event_tracer(handle, None))
        self._attached = [m for m in self._attached if m is not method]

    @property
    def num_runs(self) -> int:
        return int(self._lib.etrt_etdump_num_runs(self._live()))

    @property
    def num_events(self) -> int:
        return int(self._lib.etrt_etdump_num_events(self._live()))

    @property
    def dropped_events(self) -> int:
        return int(self._lib.etrt_etdump_dropped_events(self._live()))

    def reset(self) -> None:
        """Forgets what was recorded (e.g. warm-up runs); keeps the memory."""
        self._lib.etrt_etdump_reset(self._live())

    def write(self, path: str | PathLike[str]) -> Path:
        """Writes the .etdump file atomically."""
        p = Path(path)
        self._check(self._lib.etrt_etdump_write(self._live(), fsencode(p)))
        return p

    def close(self) -> None:
        if self._handle is None:
            return
        for method in self._attached:
            try:
                self.detach(method)
            except EtrtError:  # its module is closed already: nothing left to detach
                pass
        self._lib.etrt_etdump_free(self._handle)
        self._handle = None

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # interpreter shutdown: the library may be gone already
            pass

    def __enter__(self) -> ETDumpTracer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


__all__ = ["ETDumpTracer"]
