"""Runs etrt programs from Python through the shipped shared libraries (ctypes, no extension).

    module = etrt.load("model.etrt")
    outputs = module.forward(x)          # numpy arrays or torch tensors in, numpy arrays out

Inputs: a C-contiguous, aligned array of the dtype the method expects is passed to the runtime
by pointer (zero copy); anything else (another layout, a same-kind dtype such as float64 for a
float32 input, a torch tensor on another device) is copied once into a contiguous array.
Torch CPU tensors are viewed through `.numpy()`, so the same rules apply without importing torch.

Outputs are always copies owned by numpy: they stay valid after the next call and after the
module is closed. A dynamic input takes any shape within its bounds (`Method.inputs[i].min_shape`
.. `max_shape`), and outputs have the shape the run produced.

State a program mutates (a KV cache) lives in the method and persists between calls;
`Method.reset()` puts it back to its initial value.

bfloat16, which numpy lacks: a bfloat16 input takes a torch.bfloat16 tensor (read in place) or
floating-point values (rounded to bfloat16 as torch rounds); a bfloat16 output comes back as a
float32 array holding exactly its values. `IOSpec.element` names the type etrt stores.

Threads: a Module may be shared. Every thread gets the same Method object for a name (it loads
once), and a Method runs one call at a time: concurrent calls wait for each other, each binding
its inputs, running and copying its outputs as one unit. close() waits for running calls to
finish; later calls raise EtrtError ("... is closed").
"""

from __future__ import annotations

import ctypes
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from os import PathLike, fsencode
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from . import _bfloat16, _native
from .errors import EtrtError
from .ir import NUMPY_NAMES, ScalarType

# ETRT_DTYPE_* codes of c_api.h: the program format's scalar type codes, and the numpy dtype
# of their storage (bfloat16: its bits, as uint16).
_DTYPES: dict[int, np.dtype[Any]] = {int(st): np.dtype(name) for st, name in NUMPY_NAMES.items()}
_CODES = {dt: code for code, dt in _DTYPES.items() if code != ScalarType.BFLOAT16}
_BF16 = int(ScalarType.BFLOAT16)
# ETRT_KIND_* codes of c_api.h.
_KINDS = {0: "none", 1: "tensor", 2: "int", 3: "double", 4: "bool", 5: "other"}

Output = npt.NDArray[Any] | int | float | bool | None


class EtrtRuntimeError(EtrtError):
    """The runtime refused or failed: `code` is its error code, the message its own words."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class IOSpec:
    """One input or output of a method: its kind and, for tensors, the planned dtype and shape.
    A dynamic tensor's `shape` is its upper bound; an input accepts any shape between
    `min_shape` and `max_shape` (equal to `shape` for a static one)."""

    kind: str  # "tensor", "int", "double", "bool", "none" or "other"
    dtype: np.dtype[Any] | None = None  # what numpy users pass and get (float32 for bfloat16)
    shape: tuple[int, ...] | None = None
    dynamic: bool = False
    min_shape: tuple[int, ...] | None = None
    max_shape: tuple[int, ...] | None = None
    element: str = ""  # the element type etrt stores: numpy's name, or "bfloat16"

    def __str__(self) -> str:
        if self.kind != "tensor":
            return self.kind
        name = self.element or self.dtype
        if self.dynamic and self.min_shape is not None and self.max_shape is not None:
            dims = [
                str(lo) if lo == hi else f"{lo}..{hi}"
                for lo, hi in zip(self.min_shape, self.max_shape, strict=True)
            ]
            return f"{name}[{', '.join(dims)}]"
        if self.dynamic:
            return f"{name}{list(self.shape or ())} (at most)"
        return f"{name}{list(self.shape or ())}"


def _lib() -> ctypes.CDLL:
    return _native.libraries().runtime


def _check(status: int) -> None:
    if status != 0:
        lib = _lib()
        code = (lib.etrt_status_name(status) or b"Unknown").decode()
        message = (lib.etrt_last_error() or b"").decode(errors="replace")
        raise EtrtRuntimeError(code, message or f"{code} (no message)")


def runtime_version() -> str:
    """The loaded libetrt.so's version."""
    return str(_lib().etrt_version_string().decode())


def library_paths() -> tuple[Path, ...]:
    """Every etrt shared library this process loaded, libetrt.so first."""
    return _native.libraries().loaded


def registered_kernels() -> list[str]:
    """Operators with a registered kernel, in registration order (the one registry)."""
    lib = _lib()
    return [
        lib.etrt_registered_kernel_name(i).decode()
        for i in range(lib.etrt_num_registered_kernels())
    ]


def set_random_seed(seed: int) -> None:
    """Restarts the random stream of kernels that draw random numbers (aten::rand, randn,
    randperm, ...): the same seed gives the same draws, in this process and in C++ (not
    torch's: torch's generator gives other values). Each process starts from seed 0."""
    _lib().etrt_set_random_seed(seed & (2**64 - 1))


ISA_NAMES = ("sse2", "avx2", "avx512")


@dataclass(frozen=True)
class IsaInfo:
    """The instruction sets of etrt's own kernels: the CPU's best, the cap (set_max_isa, else
    ETRT_MAX_ISA, else "avx512": none) and the one they dispatch to, the lower of the two.
    XNNPACK picks its own code paths and ignores the cap."""

    cpu: str
    cap: str
    kernels: str

    def __str__(self) -> str:
        if self.cap == self.kernels or self.cap == "avx512":
            capped = "" if self.cap == "avx512" else f" (capped at {self.cap})"
        else:
            capped = f" (cap {self.cap} is above what the CPU has)"
        return f"kernels dispatch to {self.kernels}{capped}; the CPU has {self.cpu}"


def isa_info() -> IsaInfo:
    """The kernels' instruction sets. EtrtRuntimeError when ETRT_MAX_ISA is not one of
    ISA_NAMES (loading a method fails the same way)."""
    lib = _lib()
    cap = ctypes.c_char_p()
    _check(lib.etrt_max_isa(ctypes.byref(cap)))
    return IsaInfo(
        cpu=lib.etrt_cpu_isa().decode(),
        cap=(cap.value or b"").decode(),
        kernels=lib.etrt_kernel_isa().decode(),
    )


def set_max_isa(name: str) -> IsaInfo:
    """Caps the instruction set etrt's own kernels dispatch to: "sse2", "avx2" or "avx512"
    (no cap), as ETRT_MAX_ISA does at start-up, which it replaces. A cap above what the CPU
    has leaves the CPU's level. Not while a method runs on another thread. EtrtRuntimeError
    (InvalidArgument, naming the allowed values) for any other name."""
    _check(_lib().etrt_set_max_isa(name.encode()))
    return isa_info()


def registered_backends() -> list[str]:
    lib = _lib()
    return [
        lib.etrt_registered_backend_name(i).decode()
        for i in range(lib.etrt_num_registered_backends())
    ]


def _meta(handle: int, i: int, is_input: bool) -> IOSpec:
    lib = _lib()
    fn = lib.etrt_method_input_meta if is_input else lib.etrt_method_output_meta
    dtype, ndim, sizes = ctypes.c_int32(), ctypes.c_size_t(), ctypes.POINTER(ctypes.c_int64)()
    _check(fn(handle, i, ctypes.byref(dtype), ctypes.byref(ndim), ctypes.byref(sizes)))
    shape = tuple(sizes[d] for d in range(ndim.value))
    if dtype.value == _BF16:
        storage, element = np.dtype(np.float32), "bfloat16"
    else:
        storage = _DTYPES[dtype.value]
        element = storage.name
    dynamic = ctypes.c_int32()
    if not is_input:
        _check(lib.etrt_method_output_dynamic(handle, i, ctypes.byref(dynamic)))
        return IOSpec("tensor", storage, shape, bool(dynamic.value), element=element)
    lo, hi = ctypes.POINTER(ctypes.c_int64)(), ctypes.POINTER(ctypes.c_int64)()
    _check(
        lib.etrt_method_input_bounds(
            handle, i, ctypes.byref(dynamic), ctypes.byref(ndim), ctypes.byref(lo), ctypes.byref(hi)
        )
    )
    n = ndim.value
    return IOSpec(
        "tensor",
        storage,
        shape,
        bool(dynamic.value),
        tuple(lo[d] for d in range(n)),
        tuple(hi[d] for d in range(n)),
        element,
    )


def _is_torch_tensor(value: object) -> bool:
    return type(value).__module__.startswith("torch") and hasattr(value, "detach")


def _torch_dtype(tensor: Any, index: int) -> np.dtype[Any]:
    """The numpy dtype of a torch tensor's elements, read without touching its data."""
    name = str(tensor.dtype).removeprefix("torch.")
    try:
        return np.dtype(name)
    except TypeError as exc:
        raise EtrtError(f"input {index}: torch {tensor.dtype} has no numpy equivalent") from exc


InputCheck = Callable[[np.dtype[Any], tuple[int, ...]], None]


_KIND_NAMES = {
    "b": "bool",
    "u": "unsigned integer",
    "i": "signed integer",
    "f": "floating",
    "c": "complex",
}


def _kind_name(dtype: np.dtype[Any]) -> str:
    return _KIND_NAMES.get(dtype.kind, dtype.kind)


def check_dtype(spec: IOSpec, dtype: np.dtype[Any], index: int) -> None:
    """Raises unless `dtype` converts to what input `index` takes by the same-kind rule
    (numpy's casting="same_kind": within a kind, even narrowing, or to a higher kind; never
    from a higher kind to a lower one): the binding's own rule, since only it converts."""
    want = spec.dtype
    assert want is not None
    if dtype != want and not np.can_cast(dtype, want, casting="same_kind"):
        raise EtrtRuntimeError(
            "InvalidArgument",
            f"input {index}: expected {want}, got {dtype} (inputs convert by the same-kind rule:"
            f" within a kind or to a higher one, never {_kind_name(dtype)} to {_kind_name(want)})",
        )


def as_input_array(
    value: object, spec: IOSpec, index: int, check: InputCheck
) -> npt.NDArray[Any]:
    """`value` as an array the runtime can read in place: itself when it already is one.
    Dtype and shape are checked first, from the metadata alone (`check`, the runtime's own
    judgement of the target dtype and shape, e.g. `Method.check_input`), so a wrong input is
    never copied. For a bfloat16 input, the array of its bits (uint16)."""
    want = spec.dtype
    assert want is not None
    arr: npt.NDArray[Any]
    if spec.element == "bfloat16":
        if _bfloat16.is_torch_bfloat16(value):
            tensor: Any = value
            check(want, tuple(tensor.shape))
            return _bfloat16.torch_bits(tensor)
        source: Any = value
        arr = source.detach().cpu().numpy() if _is_torch_tensor(source) else np.asarray(source)
        check_dtype(spec, arr.dtype, index)  # any floating values, rounded to bfloat16
        check(want, arr.shape)
        return _bfloat16.from_float(arr)
    if _is_torch_tensor(value):
        tensor = value
        try:
            tensor = tensor.detach()
            check_dtype(spec, _torch_dtype(tensor, index), index)
            check(want, tuple(tensor.shape))
            arr = tensor.cpu().numpy()  # a view for CPU tensors
        except (TypeError, RuntimeError) as exc:
            raise EtrtError(f"input {index}: cannot read the torch tensor: {exc}") from exc
    else:
        arr = np.asarray(value)
    check_dtype(spec, arr.dtype, index)
    check(want, arr.shape)
    if arr.dtype != want:
        return np.ascontiguousarray(arr, dtype=want)
    if not (arr.flags.c_contiguous and arr.flags.aligned):
        return np.ascontiguousarray(arr)
    return arr


def _check_input(
    handle: int, i: int, dtype: np.dtype[Any], shape: tuple[int, ...], element: str = ""
) -> None:
    # a bfloat16 input takes float values the binding rounds: the runtime judges its bits
    code = _BF16 if element == "bfloat16" else _CODES.get(np.dtype(dtype))
    if code is None:
        raise EtrtRuntimeError("InvalidArgument", f"input {i}: etrt has no dtype {dtype}")
    sizes = (ctypes.c_int64 * max(len(shape), 1))(*shape)
    _check(_lib().etrt_method_check_input_tensor(handle, i, code, len(shape), sizes))


def _output_array(
    dtype: np.dtype[Any], shape: tuple[int, ...], strides: tuple[int, ...], address: int
) -> npt.NDArray[Any]:
    """A numpy-owned copy of a (possibly strided) tensor living in runtime memory."""
    if 0 in shape:
        return np.empty(shape, dtype)
    if not address:  # the runtime refuses this already; never read address 0
        raise EtrtRuntimeError("InvalidState", f"output of shape {list(shape)} has no data")
    size = dtype.itemsize
    lo = sum(min(0, (n - 1) * s) for n, s in zip(shape, strides, strict=True))
    hi = sum(max(0, (n - 1) * s) for n, s in zip(shape, strides, strict=True))
    nbytes = (hi - lo + 1) * size
    buf = memoryview((ctypes.c_char * nbytes).from_address(address + lo * size)).cast("B")
    view: npt.NDArray[Any] = np.ndarray(
        shape, dtype, buffer=buf, offset=-lo * size, strides=tuple(s * size for s in strides)
    )
    return view.copy(order="C")


class Method:
    """One method of a loaded program. Get it from Module.method(); the Module must stay open.
    Calls from several threads take turns (the method's lock)."""

    def __init__(self, module: Module, name: str, handle: int) -> None:
        self._module = module  # keeps the module (which owns the method) alive
        self._handle = handle
        self.name = name
        # Held across set_input .. execute .. output, so threads' calls never interleave.
        self._lock = threading.RLock()
        # Inputs bound by pointer, referenced until rebound: the method keeps their address, and
        # a later execute() without set_input() must not read freed memory.
        self._bound: dict[int, object] = {}
        self._executed = False
        lib = _lib()
        count = ctypes.c_size_t()
        _check(lib.etrt_method_num_inputs(handle, ctypes.byref(count)))
        self.inputs = tuple(self._spec(True, i) for i in range(count.value))
        _check(lib.etrt_method_num_outputs(handle, ctypes.byref(count)))
        self.outputs = tuple(self._spec(False, i) for i in range(count.value))

    def _spec(self, is_input: bool, i: int) -> IOSpec:
        lib = _lib()
        kind = ctypes.c_int32()
        kind_fn = lib.etrt_method_input_kind if is_input else lib.etrt_method_output_kind
        _check(kind_fn(self._handle, i, ctypes.byref(kind)))
        name = _KINDS.get(kind.value, "other")
        if name != "tensor":
            return IOSpec(name)
        return _meta(self._handle, i, is_input)

    @contextmanager
    def _use(self) -> Iterator[int]:
        """The native handle, for one call the module's close() waits for."""
        with self._lock, self._module._use():
            yield self._handle

    def check_input(self, i: int, dtype: np.dtype[Any], shape: tuple[int, ...]) -> None:
        """Raises EtrtRuntimeError, as set_input would, unless input i takes an array of
        `dtype` and `shape` as it is (judged by the runtime, from the metadata alone)."""
        with self._use() as handle:
            spec = self.inputs[i] if 0 <= i < len(self.inputs) else IOSpec("other")
            if spec.element == "bfloat16":
                check_dtype(spec, np.dtype(dtype), i)
            _check_input(handle, i, dtype, shape, spec.element)

    def set_input(self, i: int, value: object) -> None:
        """Binds input i. A matching array is used in place, without a copy: until execute()
        returns, changes to it are what the method reads. The array is kept alive until input i
        is bound again."""
        with self._use() as handle:
            self._set_input(handle, i, value)

    def _set_input(self, handle: int, i: int, value: object) -> None:
        # The caller holds _use(): one acquisition per call, not one per input and output.
        if not 0 <= i < len(self.inputs):
            raise EtrtError(f"method '{self.name}' has {len(self.inputs)} inputs, no input {i}")
        spec = self.inputs[i]
        lib = _lib()
        if spec.kind == "tensor":
            if (
                type(value) is np.ndarray
                and value.dtype == spec.dtype
                and spec.element != "bfloat16"
                and value.flags.c_contiguous
                and value.flags.aligned
            ):
                # Used in place, nothing to convert: the runtime's set_input checks the shape
                # itself, so the metadata check before a conversion is not needed.
                arr: npt.NDArray[Any] = value
            else:
                arr = as_input_array(
                    value,
                    spec,
                    i,
                    lambda dt, shape: _check_input(handle, i, dt, shape, spec.element),
                )
            sizes = (ctypes.c_int64 * max(arr.ndim, 1))(*arr.shape)
            code = _BF16 if spec.element == "bfloat16" else _CODES[arr.dtype]
            _check(
                lib.etrt_method_set_input_tensor(
                    handle, i, arr.ctypes.data, code, arr.ndim, sizes
                )
            )
            self._bound[i] = arr
        elif spec.kind == "int":
            _check(lib.etrt_method_set_input_int(handle, i, int(_scalar(value, i))))
        elif spec.kind == "double":
            _check(lib.etrt_method_set_input_double(handle, i, float(_scalar(value, i))))
        elif spec.kind == "bool":
            _check(lib.etrt_method_set_input_bool(handle, i, 1 if _scalar(value, i) else 0))
        else:
            raise EtrtError(f"input {i} of method '{self.name}' is {spec.kind}: not settable")

    def execute(self) -> None:
        with self._use() as handle:
            self._execute(handle)

    def _execute(self, handle: int) -> None:
        _check(_lib().etrt_method_execute(handle))
        self._executed = True

    @property
    def num_states(self) -> int:
        """How many State tensors (buffers the program mutates) the method holds."""
        with self._use() as handle:
            count = ctypes.c_size_t()
            _check(_lib().etrt_method_num_states(handle, ctypes.byref(count)))
            return count.value

    def reset(self) -> None:
        """Puts the method's state (every buffer the program mutates) back to its initial value,
        as when it was loaded: the next call starts afresh (a new sequence, for a decoder)."""
        with self._use() as handle:
            _check(_lib().etrt_method_reset_state(handle))

    def output(self, i: int) -> Output:
        """Output i of the last execute(), copied: numpy arrays for tensors, Python scalars."""
        with self._use() as handle:
            return self._output(handle, i)

    def _output(self, handle: int, i: int) -> Output:
        if not self._executed:
            raise EtrtError(f"method '{self.name}' has not run yet")
        if not 0 <= i < len(self.outputs):
            raise EtrtError(
                f"method '{self.name}' has {len(self.outputs)} outputs, no output {i}"
            )
        lib = _lib()
        kind = self.outputs[i].kind
        if kind == "tensor":
            dtype, ndim = ctypes.c_int32(), ctypes.c_size_t()
            sizes, strides = ctypes.POINTER(ctypes.c_int64)(), ctypes.POINTER(ctypes.c_int64)()
            data = ctypes.c_void_p()
            _check(
                lib.etrt_method_output_tensor(
                    handle,
                    i,
                    ctypes.byref(dtype),
                    ctypes.byref(ndim),
                    ctypes.byref(sizes),
                    ctypes.byref(strides),
                    ctypes.byref(data),
                )
            )
            n = ndim.value
            arr = _output_array(
                _DTYPES[dtype.value],
                tuple(sizes[d] for d in range(n)),
                tuple(strides[d] for d in range(n)),
                data.value or 0,
            )
            return _bfloat16.to_float32(arr) if dtype.value == _BF16 else arr
        if kind == "int":
            iv = ctypes.c_int64()
            _check(lib.etrt_method_output_int(handle, i, ctypes.byref(iv)))
            return int(iv.value)
        if kind == "double":
            dv = ctypes.c_double()
            _check(lib.etrt_method_output_double(handle, i, ctypes.byref(dv)))
            return float(dv.value)
        if kind == "bool":
            bv = ctypes.c_int32()
            _check(lib.etrt_method_output_bool(handle, i, ctypes.byref(bv)))
            return bool(bv.value)
        if kind == "none":
            return None
        raise EtrtError(
            f"output {i} of method '{self.name}' is {kind}: not readable from Python"
        )

    def __call__(self, *inputs: object) -> list[Output]:
        """Binds every input, runs, and returns copies of every output."""
        with self._use() as handle:
            if len(inputs) != len(self.inputs):
                raise EtrtError(
                    f"method '{self.name}' takes {len(self.inputs)} inputs, got {len(inputs)}"
                )
            for i, value in enumerate(inputs):
                self._set_input(handle, i, value)
            self._execute(handle)
            return [self._output(handle, i) for i in range(len(self.outputs))]

    def __repr__(self) -> str:
        ins = ", ".join(map(str, self.inputs))
        outs = ", ".join(map(str, self.outputs))
        return f"<etrt.Method {self.name}({ins}) -> ({outs})>"


def _scalar(value: object, i: int) -> Any:
    arr = np.asarray(value)
    if arr.ndim != 0:
        raise EtrtError(f"input {i} is a scalar, got an array of shape {arr.shape}")
    return arr.item()


class Module:
    """A program file, mapped and verified; methods load on first use. `data` is the named data
    map (.ptd) of a program exported with external constants.

    Close it (or use `with`) to unmap the file early; outputs already returned stay valid.
    """

    def __init__(
        self,
        path: str | PathLike[str],
        data: str | PathLike[str] | None = None,
        *,
        max_memory_bytes: int | None = None,
    ) -> None:
        """`max_memory_bytes`: the memory budget of each method (its arena, delegate
        workspaces and kernel scratch; every tensor it declares must fit too). None: the
        runtime's default, ETRT_MAX_MEMORY_BYTES or 16 GiB. A method needing more fails to
        load with EtrtRuntimeError code OutOfMemory, before anything is allocated."""
        self._handle: int | None = None
        self.path = Path(path)
        self.data = Path(data) if data is not None else None
        path_arg = _c_path(path, "program")
        data_arg = _c_path(data, "data map") if data is not None else None
        # Guards _handle and _active; close() waits on it until no call is running.
        self._state = threading.Condition(threading.Lock())
        self._active = 0
        self._closing = False
        self._methods_lock = threading.Lock()  # one Method per name, loaded once
        self._methods: dict[str, Method] = {}
        if max_memory_bytes is not None and not 0 < max_memory_bytes < 2**64:
            raise EtrtError(
                f"max_memory_bytes must be a positive byte count, got {max_memory_bytes}"
            )
        handle = ctypes.c_void_p()
        _check(_lib().etrt_module_open_with_data(path_arg, data_arg, ctypes.byref(handle)))
        self._handle = handle.value
        if max_memory_bytes is not None:
            _check(_lib().etrt_module_set_max_memory_bytes(self._handle, max_memory_bytes))

    @contextmanager
    def _use(self) -> Iterator[int]:
        """The native handle for the duration of one call; close() waits for it."""
        with self._state:
            if self._handle is None or self._closing:
                raise EtrtError(f"module {self.path} is closed")
            self._active += 1
            handle = self._handle
        try:
            yield handle
        finally:
            with self._state:
                self._active -= 1
                if self._active == 0:
                    self._state.notify_all()

    def method_names(self) -> list[str]:
        lib = _lib()
        with self._use() as handle:
            count = ctypes.c_size_t()
            _check(lib.etrt_module_num_methods(handle, ctypes.byref(count)))
            names = []
            for i in range(count.value):
                name = ctypes.c_char_p()
                _check(lib.etrt_module_method_name(handle, i, ctypes.byref(name)))
                names.append((name.value or b"").decode())
            return names

    def method(self, name: str = "forward") -> Method:
        """The loaded method `name`; fails naming every operator or backend it lacks. Every
        caller, on any thread, gets the same Method."""
        encoded = name.encode()
        if b"\0" in encoded:
            raise EtrtError(f"method name {name!r} contains a NUL character")
        with self._use() as handle, self._methods_lock:
            method = self._methods.get(name)
            if method is None:
                out = ctypes.c_void_p()
                _check(_lib().etrt_module_method(handle, encoded, ctypes.byref(out)))
                assert out.value is not None
                method = self._methods[name] = Method(self, name, out.value)
            return method

    def run(self, method: str, *inputs: object) -> list[Output]:
        # A method loaded before needs no lock to find (a dict read); the call itself refuses
        # a closed module as method() would.
        loaded = self._methods.get(method)
        return (loaded if loaded is not None else self.method(method))(*inputs)

    def forward(self, *inputs: object) -> list[Output]:
        return self.run("forward", *inputs)

    def close(self) -> None:
        """Frees the program once the calls running on other threads return; idempotent."""
        with self._state:
            if self._handle is None or self._closing:
                return
            self._closing = True
            self._state.wait_for(lambda: self._active == 0)
            handle, self._handle = self._handle, None
        _lib().etrt_module_free(handle)
        with self._methods_lock:
            self._methods.clear()

    def __enter__(self) -> Module:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        if getattr(self, "_handle", None) is None:  # closed, or __init__ failed
            return
        try:
            self.close()
        except Exception:  # interpreter shutdown: the library may be gone already
            pass

    def __repr__(self) -> str:
        return f"<etrt.Module {self.path}>"


def _c_path(path: str | PathLike[str], what: str) -> bytes:
    """`path` for the C ABI, which reads up to the first NUL: one inside would name another file."""
    encoded = fsencode(path)
    if b"\0" in encoded:
        raise EtrtError(f"{what} path {str(path)!r} contains a NUL character")
    return encoded


def load(
    path: str | PathLike[str],
    data: str | PathLike[str] | None = None,
    *,
    max_memory_bytes: int | None = None,
) -> Module:
    """Opens a program (and its named data map): same as etrt.Module(path, data, ...)."""
    return Module(path, data, max_memory_bytes=max_memory_bytes)


__all__ = [
    "ISA_NAMES",
    "EtrtRuntimeError",
    "IOSpec",
    "IsaInfo",
    "Method",
    "Module",
    "Output",
    "as_input_array",
    "isa_info",
    "library_paths",
    "load",
    "registered_backends",
    "registered_kernels",
    "runtime_version",
    "set_max_isa",
    "set_random_seed",
]
