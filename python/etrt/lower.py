"""An ExportedProgram (core ATen) -> an ExecutionPlan plus constant segments.

Walks the graph once: placeholders become input/constant tensors, every ATen call becomes a kernel
call whose arguments follow the op's schema (defaults filled in) followed by its outputs.

Dynamic shapes: a tensor with symbolic sizes is planned at its upper bound and marked dynamic;
the arithmetic on sizes becomes scalar kernels (symbolic.py). State: a buffer the program mutates
(a BUFFER_MUTATION output) becomes a State tensor owned by the method; its new value is written
in place when the op producing it reads only the buffer, else copied into it at the end.
"""

from __future__ import annotations

import operator
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import torch
from torch.export import ExportedProgram
from torch.export.graph_signature import InputKind, OutputKind
from torch.fx import Node

from . import _ops
from .errors import ExportError, MissingOpsError
from .ir import (
    BoolListValue,
    BoolValue,
    DoubleListValue,
    DoubleValue,
    ExecutionPlan,
    Instruction,
    IntListValue,
    IntValue,
    KernelCall,
    NullValue,
    OptionalTensorListValue,
    ScalarType,
    StorageKind,
    StringValue,
    TensorListValue,
    TensorValue,
    Value,
    tensor_indices,
)
from .symbolic import PRIM_OPS, SHAPE_QUERIES, SymbolBounds, is_symbolic

# Tensor dtypes a program may hold.
TENSOR_DTYPES: dict[torch.dtype, ScalarType] = {
    torch.float32: ScalarType.FLOAT,
    torch.int64: ScalarType.LONG,
    torch.int32: ScalarType.INT,
    torch.bool: ScalarType.BOOL,
    torch.uint8: ScalarType.BYTE,
    torch.int8: ScalarType.CHAR,
    torch.float16: ScalarType.HALF,
    torch.bfloat16: ScalarType.BFLOAT16,
}

# dtype arguments (e.g. full_like's dtype=) may name any etrt scalar type.
DTYPE_CODES: dict[torch.dtype, ScalarType] = {
    **TENSOR_DTYPES,
    torch.float64: ScalarType.DOUBLE,
}

_STATIC_SHAPE_REASON = (
    "its kernel takes the output's size from the plan, so the output cannot have a dynamic "
    "shape; export this part with static shapes"
)

_CONSTANT_KINDS = (InputKind.PARAMETER, InputKind.BUFFER, InputKind.CONSTANT_TENSOR)

# Checks torch.export leaves in graphs (e.g. after .to(dtype)); with static shapes they verify
# nothing at run time, so they are dropped.
_ASSERT_OPS = frozenset(
    {
        "aten::_assert_tensor_metadata",
        "aten::_assert_scalar",
        "aten::_assert_async",
        "aten::_assert_async.msg",
        "aten::sym_constrain_range_for_size",
        "aten::sym_constrain_range",
    }
)


@dataclass
class LoweredProgram:
    plan: ExecutionPlan
    segments: list[bytes]
    missing_ops: list[str] = field(default_factory=list)  # unsupported ops kept (allow_missing_ops)
    # With external_constants: the constants by key, for the named data map (.ptd).
    external: dict[str, torch.Tensor] = field(default_factory=dict)


def scalar_type_of(dtype: torch.dtype, what: str) -> ScalarType:
    st = TENSOR_DTYPES.get(dtype)
    if st is None:
        allowed = ", ".join(str(d).removeprefix("torch.") for d in TENSOR_DTYPES)
        raise ExportError(f"{what} has dtype {dtype}; etrt supports {allowed}")
    return st


def op_name(op: torch._ops.OpOverload) -> str:
    """The overload name as OpOverload.name() gives it, e.g. "aten::add.Tensor"."""
    schema = op._schema
    return f"{schema.name}.{schema.overload_name}" if schema.overload_name else schema.name


def _refuse(node: Node, name: str, reason: str) -> ExportError:
    return ExportError(f"node {node.name}: etrt does not run {name}: {reason}")


_FLOAT_KERNEL_DTYPES = (torch.float32, torch.float16, torch.bfloat16)


def _check_arguments(node: Node, name: str) -> None:
    """Arguments etrt's kernels refuse, refused at export instead of when the program runs."""
    if name == "aten::scaled_dot_product_attention":
        p = node.args[4] if len(node.args) > 4 else node.kwargs.get("dropout_p", 0.0)
        if p != 0.0:
            raise _refuse(
                node, name, f"dropout_p={p}; etrt runs inference only "
                "(export the model in eval mode, or pass dropout_p=0)"
            )  # fmt: skip
    if name == "aten::convolution":
        weight = node.args[1].meta.get("val") if isinstance(node.args[1], Node) else None
        transposed = len(node.args) > 6 and node.args[6]
        if isinstance(weight, torch.Tensor) and weight.dim() > 4 and transposed:
            raise _refuse(node, name, "3-D transposed convolution has no etrt kernel")
    if name == "aten::native_dropout":
        p, train = node.args[1], node.args[2] if len(node.args) > 2 else None
        if train and p != 0.0:
            raise _refuse(
                node, name, f"dropout in training mode (p={p}); export the model in eval mode"
            )
    if name in _ops.FLOAT_ONLY_OPS:
        first = node.args[0] if node.args else None
        val = first.meta.get("val") if isinstance(first, Node) else None
        # float16 and bfloat16 run through the float32 kernel (upcast.py)
        if isinstance(val, torch.Tensor) and val.dtype not in _FLOAT_KERNEL_DTYPES:
            raise _refuse(
                node, name, f"its kernel computes floating-point types only (float32, and float16 "
                f"and bfloat16 through float32), the input is {val.dtype}"
            )  # fmt: skip


def dim_order_of(val: torch.Tensor, bounds: SymbolBounds | None = None) -> tuple[int, ...]:
    """The order of `val`'s dimensions in memory, outermost first, when its strides are a
    permutation of contiguous strides; the contiguous order otherwise. Symbolic sizes and strides
    are taken at their upper bounds."""
    concrete = bounds.concrete if bounds is not None else int
    sizes = tuple(concrete(s) for s in val.shape)
    strides = tuple(concrete(s) for s in val.stride())
    order = tuple(sorted(range(len(sizes)), key=lambda d: (-strides[d], d)))
    contiguous = tuple(range(len(sizes)))
    expected = 1
    for d in reversed(order):
        if sizes[d] != 1 and strides[d] != expected:
            return contiguous
        expected *= sizes[d]
    # Size-1 dimensions can sit anywhere: only the order of the others tells a layout apart.
    real = [d for d in order if sizes[d] != 1]
    return contiguous if real == sorted(real) else order


def _list_element_kind(arg_type: Any) -> str | None:
    """For a list-typed schema argument: 'int', 'float', 'bool', 'tensor', 'opt_tensor' or None."""
    t = arg_type
    if isinstance(t, torch.OptionalType):
        t = t.getElementType()
    if not isinstance(t, torch.ListType):
        return None
    e = t.getElementType()
    if isinstance(e, torch.OptionalType):
        return "opt_tensor" if isinstance(e.getElementType(), torch.TensorType) else None
    if isinstance(e, torch.TensorType):
        return "tensor"
    if isinstance(e, (torch.IntType, torch.SymIntType)):
        return "int"
    if isinstance(e, torch.FloatType):
        return "float"
    if isinstance(e, torch.BoolType):
        return "bool"
    return None


class _Lowerer:
    def __init__(self, ep: ExportedProgram, allow_missing_ops: bool, external: bool) -> None:
        self.ep = ep
        self.allow_missing_ops = allow_missing_ops
        self.external_constants = external
        self.external: dict[str, torch.Tensor] = {}
        self.values: list[Value] = []
        self.inputs: list[int] = []
        self.outputs: list[int] = []
        self.operators: list[str] = []
        self.op_index: dict[str, int] = {}
        self.instructions: list[Instruction] = []
        self.segments: list[bytes] = []
        # node name -> value index (tensor or tensor list); multi-output nodes -> element indices
        self.node_value: dict[str, int] = {}
        self.node_elements: dict[str, list[int]] = {}
        self.missing: dict[str, list[str]] = {}
        self.bounds = SymbolBounds.of(ep)
        self.order = {n.name: i for i, n in enumerate(ep.graph.nodes)}
        self.dead = _dead_nodes(ep)
        sig = ep.graph_signature
        # Buffers the program mutates: target -> its State value; node -> the buffer it updates.
        self.state: dict[str, int] = {}
        self.buffer_of = {
            spec.arg.name: spec.target for spec in sig.input_specs if spec.kind == InputKind.BUFFER
        }
        self.mutations = {
            spec.arg.name: spec.target
            for spec in sig.output_specs
            if spec.kind == OutputKind.BUFFER_MUTATION and spec.target is not None
        }

    def add(self, value: Value) -> int:
        self.values.append(value)
        return len(self.values) - 1

    # --- placeholders ---------------------------------------------------------------------------

    def lower_placeholders(self) -> None:
        specs = {spec.arg.name: spec for spec in self.ep.graph_signature.input_specs}
        for node in self.ep.graph.nodes:
            if node.op != "placeholder":
                continue
            spec = specs.get(node.name)
            if spec is None:
                raise ExportError(f"placeholder {node.name} is not in the graph signature")
            if spec.kind == InputKind.USER_INPUT:
                val = node.meta.get("val")
                if not isinstance(val, torch.Tensor):
                    raise ExportError(
                        f"input {node.name} is not a tensor ({type(val).__name__}); "
                        "etrt programs take tensor inputs only"
                    )
                index = self.add(self._tensor_from_meta(val, StorageKind.INPUT, node.name))
                self.inputs.append(index)
                self.node_value[node.name] = index
            elif spec.kind == InputKind.BUFFER and spec.target in self.mutations.values():
                assert spec.target is not None
                self.node_value[node.name] = self.state[spec.target] = self._state(
                    node.name, spec.target
                )
            elif spec.kind in _CONSTANT_KINDS:
                if not node.users:  # e.g. the float weights a quantized program no longer reads
                    continue
                self.node_value[node.name] = self._constant(node.name, spec.target)
            elif spec.kind == InputKind.TOKEN:
                raise ExportError(_effectful_refusal(self.ep.graph))
            else:
                raise ExportError(f"input {node.name} of kind {spec.kind.name} is not supported")

    def _constant_data(self, name: str, target: str | None) -> torch.Tensor:
        tensor: Any = None
        if target is not None:
            if target in self.ep.state_dict:
                tensor = self.ep.state_dict[target]
            elif target in self.ep.constants:
                tensor = self.ep.constants[target]
        if not isinstance(tensor, torch.Tensor):
            raise ExportError(
                f"constant {name} ({target}) has no tensor data in the exported program"
            )
        return tensor.detach().to("cpu").contiguous()

    def _state(self, name: str, target: str) -> int:
        """A buffer the program mutates: method-owned memory starting as the buffer's value."""
        data = self._constant_data(name, target)
        st = scalar_type_of(data.dtype, f"buffer {name}")
        sizes = tuple(int(s) for s in data.shape)
        zero = not bool(data.bool().any()) if data.numel() else True
        segment = 0
        if not zero:
            self.segments.append(data.view(-1).numpy().tobytes())
            segment = len(self.segments) - 1
        state = TensorValue(st, sizes, StorageKind.STATE, constant_segment=segment, name=name)
        state.zero_initial = zero
        return self.add(state)

    def _constant(self, name: str, target: str | None) -> int:
        data = self._constant_data(name, target)
        st = scalar_type_of(data.dtype, f"constant {name}")
        sizes = tuple(int(s) for s in data.shape)
        if self.external_constants:  # into the named data map, by parameter name
            assert target is not None
            self.external[target] = data
            value = TensorValue(st, sizes, StorageKind.EXTERNAL, external_key=target, name=name)
        else:
            raw = data.view(-1).view(torch.uint8)  # numpy has no bfloat16: bytes of any dtype
            self.segments.append(raw.numpy().tobytes() if data.numel() else b"")
            value = TensorValue(
                st, sizes, StorageKind.CONSTANT, constant_segment=len(self.segments) - 1, name=name
            )
        return self.add(value)

    def _tensor_from_meta(
        self, val: Any, storage: StorageKind, name: str, view_of: int | None = None
    ) -> TensorValue:
        if not isinstance(val, torch.Tensor):
            raise ExportError(f"node {name} produces {type(val).__name__}, expected a tensor")
        what = "input" if storage == StorageKind.INPUT else "tensor"
        sizes = tuple(
            self.bounds.upper(s, f"{what} {name} dim {d}") for d, s in enumerate(val.shape)
        )
        dynamic = any(not isinstance(s, int) for s in val.shape)
        lo: tuple[int, ...] = ()
        hi: tuple[int, ...] = ()
        if dynamic and storage == StorageKind.INPUT:
            lo = tuple(max(0, self.bounds.size_range(s)[0] or 0) for s in val.shape)
            hi = sizes
        return TensorValue(
            scalar_type=scalar_type_of(val.dtype, f"tensor {name}"),
            sizes=sizes,
            storage=storage,
            dim_order=dim_order_of(val, self.bounds) if storage == StorageKind.PLANNED else (),
            dynamic=dynamic,
            min_sizes=lo,
            max_sizes=hi,
            view_of=view_of,
            name=name,
        )

    def _contiguous_outputs(self, outs: list[int]) -> dict[int, int]:
        """For a kernel that writes contiguous outputs: each output torch laid out otherwise
        becomes a contiguous temporary, copied by aten::clone into the planned layout (later
        views may depend on it). Returns {temporary: final value}."""
        moved: dict[int, int] = {}
        for index in outs:
            t = self.values[index]
            if not isinstance(t, TensorValue) or t.dim_order == tuple(range(len(t.sizes))):
                continue
            final = self.add(t)
            self.values[index] = replace(t, dim_order=(), name=f"{t.name}.contiguous")
            moved[index] = final
        return moved

    def _op_index(self, name: str) -> int:
        if name not in self.op_index:
            self.op_index[name] = len(self.operators)
            self.operators.append(name)
        return self.op_index[name]

    # --- calls ----------------------------------------------------------------------------------

    def lower_call(self, node: Node) -> None:
        target = node.target
        if node.name in self.dead:
            return
        if target is operator.getitem:
            self._lower_getitem(node)
            return
        if target in PRIM_OPS or (
            is_symbolic(node.meta.get("val")) and not _is_scalar_result_op(target)
        ):
            self._lower_scalar(node)
            return
        if not isinstance(target, torch._ops.OpOverload):
            raise ExportError(f"node {node.name} calls {target!r}, which is not an ATen operator")
        if target is torch.ops.aten.clone.default and self._identity_clone(node):
            # Its users read the source: nothing writes either after (a functional graph).
            src = node.args[0]
            assert isinstance(src, Node)
            self.node_value[node.name] = self.node_value[src.name]
            return
        name = op_name(target)
        if not target._schema.returns:
            raise ExportError(f"node {node.name}: {name} returns nothing; etrt cannot run it")
        if not _ops.is_supported(name):
            if not self.allow_missing_ops and (reason := _ops.refusal(name)) is not None:
                raise ExportError(f"node {node.name}: etrt does not run {name}: {reason}")
            self.missing.setdefault(name, []).append(node.name)
        schema = target._schema
        for a in schema.arguments:
            if a.alias_info is not None and a.alias_info.is_write:
                raise ExportError(f"node {node.name}: {name} mutates its argument {a.name}")

        _check_arguments(node, name)
        args = [self._encode_arg(node, a, i) for i, a in enumerate(schema.arguments)]
        extra = set(node.kwargs) - {a.name for a in schema.arguments}
        if len(node.args) > len(schema.arguments) or extra:
            raise ExportError(f"node {node.name}: arguments do not match the schema of {name}")

        is_view = _ops.is_view_op(name)
        base = self._view_base(node, args) if is_view else None
        storage = StorageKind.VIEW if is_view else StorageKind.PLANNED
        meta = node.meta.get("val")
        outs: list[int] = []
        returns = schema.returns
        in_place = self._in_place_state(node, name, args)
        if in_place is not None:  # the op writes the buffer's new value into the buffer itself
            self.node_value[node.name] = in_place
            self.instructions.append(
                KernelCall(self._op_index(name), (*args, in_place), 1, node=node.name)
            )
            return
        if len(returns) == 1 and _list_element_kind(returns[0].type) == "tensor":
            if not isinstance(meta, (list, tuple)):
                raise ExportError(f"node {node.name}: expected a list of tensors from {name}")
            items = [
                self.add(self._tensor_from_meta(m, storage, f"{node.name}[{i}]", base))
                for i, m in enumerate(meta)
            ]
            outs.append(self.add(TensorListValue(tuple(items))))
            self.node_value[node.name] = outs[0]
            self.node_elements[node.name] = items
        elif name in _ops.SCALAR_RESULT_OPS:
            # The kernel writes the Scalar into this value when it runs; exported as None, so no
            # pass mistakes it for a constant.
            outs.append(self.add(NullValue()))
            self.node_value[node.name] = outs[0]
        elif len(returns) == 1:
            if not isinstance(returns[0].type, torch.TensorType):
                raise ExportError(
                    f"node {node.name}: {name} returns {returns[0].type}, not a tensor"
                )
            outs.append(self.add(self._tensor_from_meta(meta, storage, node.name, base)))
            self.node_value[node.name] = outs[0]
        else:
            if not isinstance(meta, (list, tuple)) or len(meta) != len(returns):
                raise ExportError(f"node {node.name}: expected {len(returns)} outputs from {name}")
            for i, (r, m) in enumerate(zip(returns, meta, strict=True)):
                if not isinstance(r.type, torch.TensorType):
                    raise ExportError(f"node {node.name}: {name} returns {r.type}, not a tensor")
                outs.append(self.add(self._tensor_from_meta(m, storage, f"{node.name}[{i}]", base)))
            self.node_elements[node.name] = outs

        if name in _ops.STATIC_SHAPE_OPS and any(
            isinstance(self.values[t], TensorValue) and self.values[t].dynamic  # type: ignore[union-attr]
            for o in outs
            for t in tensor_indices(self.values, o)
        ):
            raise _refuse(node, name, _STATIC_SHAPE_REASON)
        moved = {} if _ops.writes_any_layout(name) else self._contiguous_outputs(outs)
        self.instructions.append(
            KernelCall(
                self._op_index(name), tuple(args + outs), num_outputs=len(outs), node=node.name
            )
        )
        for temp, final in moved.items():
            fmt = self.add(NullValue())
            self.instructions.append(
                KernelCall(self._op_index("aten::clone"), (temp, fmt, final), 1, node=node.name)
            )
        if moved:
            if self.node_value.get(node.name) in moved:
                self.node_value[node.name] = moved[self.node_value[node.name]]
            if node.name in self.node_elements:
                self.node_elements[node.name] = [
                    moved.get(i, i) for i in self.node_elements[node.name]
                ]

    def _lower_scalar(self, node: Node) -> None:
        """Arithmetic on symbolic sizes (and the shape queries it starts from): a kernel writing
        an Int, Double or Bool value when the program runs."""
        target, val = node.target, node.meta.get("val")
        if not is_symbolic(val):  # a constant torch left as a node
            if not isinstance(val, (bool, int, float)):
                raise ExportError(f"node {node.name} computes {val!r}, not a scalar etrt can hold")
            self.node_value[node.name] = self.add(_scalar_value(val))
            return
        if isinstance(target, torch._ops.OpOverload):
            name = op_name(target)
            if name not in SHAPE_QUERIES:
                reason = _ops.refusal(name) or "etrt computes no symbolic value with it"
                raise _refuse(node, name, reason)
            schema = target._schema
            args = [self._encode_arg(node, a, i) for i, a in enumerate(schema.arguments)]
        elif target in PRIM_OPS:
            name = PRIM_OPS[target]
            if node.kwargs:
                raise ExportError(f"node {node.name}: {target!r} with keyword arguments")
            args = [self._scalar_operand(node, a) for a in node.args]
        else:
            raise ExportError(
                f"node {node.name} computes the symbolic value {val} with {target!r}, which etrt "
                "does not run"
            )
        hint = val.node.hint  # type: ignore[union-attr]
        placeholder: Value
        if isinstance(val, torch.SymBool):
            placeholder = BoolValue(bool(hint) if hint is not None else False)
        elif isinstance(val, torch.SymFloat):
            placeholder = DoubleValue(float(hint) if hint is not None else 0.0)
        else:
            placeholder = IntValue(int(hint) if hint is not None else 0)
        out = self.add(placeholder)
        self.instructions.append(KernelCall(self._op_index(name), (*args, out), 1, node=node.name))
        self.node_value[node.name] = out

    def _scalar_operand(self, node: Node, value: Any) -> int:
        if isinstance(value, Node):
            return self._node_index(value, node)
        if isinstance(value, (bool, int, float)):
            return self.add(_scalar_value(value))
        raise ExportError(f"node {node.name}: operand {value!r} is not a scalar")

    def _identity_clone(self, node: Node) -> bool:
        """Whether the clone `node` copies an intermediate into the same layout (dropout in
        evaluation exports as one: ViT-B/16 has 49), so its users may read the source itself.
        Not a clone of an input, constant or buffer (a snapshot of state that may be written
        later, or memory the caller owns), nor one the outputs or a buffer update read."""
        src = node.args[0] if node.args else None
        if not isinstance(src, Node) or src.name not in self.node_value or len(node.args) > 1:
            return False
        if set(node.kwargs) - {"memory_format"} or node.kwargs.get("memory_format") not in (
            None, torch.preserve_format, torch.contiguous_format,
        ):  # fmt: skip
            return False
        if any(u.op == "output" for u in node.users):  # buffer updates are outputs too
            return False
        a, b = src.meta.get("val"), node.meta.get("val")
        if not isinstance(a, torch.Tensor) or not isinstance(b, torch.Tensor):
            return False
        dims = (*a.shape, *a.stride(), *b.shape, *b.stride())
        if not all(isinstance(d, int) for d in dims):
            return False
        if a.dtype != b.dtype or tuple(a.shape) != tuple(b.shape) or a.stride() != b.stride():
            return False
        root = self.values[storage_root_of(self.values, self.node_value[src.name])]
        return isinstance(root, TensorValue) and root.storage == StorageKind.PLANNED

    def _in_place_state(self, node: Node, name: str, args: list[int]) -> int | None:
        """The State value `node` may write its result into: when it computes a buffer's new
        value from the buffer itself (index_put into a KV cache, say), its other arguments are
        not the buffer's memory, and nothing reads the buffer's old value after it."""
        target = self.mutations.get(node.name)
        base = node.args[0] if node.args else None
        if target is None or name not in _ops.IN_PLACE_OPS or not isinstance(base, Node):
            return None
        if base.op != "placeholder" or self.buffer_of.get(base.name) != target:
            return None
        state = self.state[target]
        tv, meta = self.values[state], node.meta.get("val")
        if not isinstance(tv, TensorValue) or not isinstance(meta, torch.Tensor):
            return None
        if tuple(meta.shape) != tv.sizes or scalar_type_of(meta.dtype, node.name) != tv.scalar_type:
            return None
        if any(
            storage_root_of(self.values, t) == state
            for a in args[1:]
            for t in tensor_indices(self.values, a)
        ):
            return None  # e.g. copy_(buffer.t()): it would read what it overwrites
        return state if self._old_value_read_before(base, node) else None

    def _old_value_read_before(self, base: Node, node: Node) -> bool:
        """Whether every read of `base` (through views too) happens before `node` runs."""
        pending = [base]
        while pending:
            for user in pending.pop().users:
                if user is node or user.name in self.dead:
                    continue
                if user.op != "call_function":
                    return False
                if user.target is operator.getitem or (
                    isinstance(user.target, torch._ops.OpOverload)
                    and _ops.is_view_op(op_name(user.target))
                ):
                    pending.append(user)
                elif self.order[user.name] > self.order[node.name]:
                    return False
        return True

    def _view_base(self, node: Node, args: list[int]) -> int:
        if not args or not isinstance(self.values[args[0]], TensorValue):
            raise ExportError(f"node {node.name}: a view op's first argument must be a tensor")
        return args[0]

    def _lower_getitem(self, node: Node) -> None:
        src, idx = node.args[0], node.args[1]
        if not isinstance(src, Node) or not isinstance(idx, int):
            raise ExportError(f"node {node.name}: unsupported getitem")
        elements = self.node_elements.get(src.name)
        if elements is None or not -len(elements) <= idx < len(elements):
            raise ExportError(f"node {node.name}: getitem of {src.name} has no element {idx}")
        self.node_value[node.name] = elements[idx]

    def _node_index(self, node: Node, user: Node) -> int:
        index = self.node_value.get(node.name)
        if index is None:
            raise ExportError(f"node {user.name} uses {node.name}, which has no single value")
        return index

    def _encode_arg(self, node: Node, arg: Any, position: int) -> int:
        if position < len(node.args) and not arg.kwarg_only:
            value = node.args[position]
        elif arg.name in node.kwargs:
            value = node.kwargs[arg.name]
        elif arg.has_default_value():
            value = arg.default_value
        else:
            raise ExportError(f"node {node.name}: missing argument {arg.name}")
        return self._encode(node, arg, value)

    def _encode(self, node: Node, arg: Any, value: Any) -> int:
        where = f"node {node.name}, argument {arg.name}"
        if isinstance(value, Node):
            index = self._node_index(value, node)
            v = self.values[index]
            int_list = arg.N is not None and _list_element_kind(arg.type) == "int"
            if int_list and isinstance(v, IntValue):
                n = int(arg.N)  # one symbolic int for an int[N] argument
                return self.add(IntListValue((v.val,) * n, (index,) * n))
            return index
        if value is None:
            return self.add(NullValue())
        if isinstance(value, bool):
            return self.add(BoolValue(value))
        if isinstance(value, int):
            if arg.N is not None and _list_element_kind(arg.type) == "int":
                return self.add(IntListValue((value,) * int(arg.N)))
            return self.add(IntValue(value))
        if isinstance(value, float):
            return self.add(DoubleValue(value))
        if isinstance(value, str):
            return self.add(StringValue(value))
        if isinstance(value, torch.dtype):
            code = DTYPE_CODES.get(value)
            if code is None:
                allowed = ", ".join(str(d).removeprefix("torch.") for d in DTYPE_CODES)
                raise ExportError(f"{where} names dtype {value}; etrt supports {allowed}")
            return self.add(IntValue(int(code)))
        if isinstance(value, (torch.layout, torch.device, torch.memory_format)):
            return self.add(NullValue())
        if isinstance(value, (list, tuple)):
            return self._encode_list(node, arg, list(value), where)
        if is_symbolic(value):
            raise ExportError(f"{where}: symbolic value {value} outside the graph's nodes")
        raise ExportError(f"{where}: cannot encode {type(value).__name__} {value!r}")

    def _encode_list(self, node: Node, arg: Any, items: list[Any], where: str) -> int:
        kind = _list_element_kind(arg.type)
        if kind is None:
            kind = _infer_list_kind(items)
        if kind == "tensor":
            if not all(isinstance(i, Node) for i in items):
                raise ExportError(f"{where}: expected a list of tensors")
            return self.add(TensorListValue(tuple(self._node_index(i, node) for i in items)))
        if kind == "opt_tensor":
            indices = []
            for i in items:
                if i is None:
                    indices.append(self.add(NullValue()))
                elif isinstance(i, Node):
                    indices.append(self._node_index(i, node))
                else:
                    raise ExportError(f"{where}: expected tensors or None")
            return self.add(OptionalTensorListValue(tuple(indices)))
        for i in items:
            if is_symbolic(i):
                raise ExportError(f"{where}: symbolic value {i} outside the graph's nodes")
        if kind == "int" and any(isinstance(i, Node) for i in items):
            return self._symbolic_int_list(node, items, where)
        if kind == "bool" and all(isinstance(i, bool) for i in items):
            return self.add(BoolListValue(tuple(items)))
        if kind == "int" and all(isinstance(i, int) and not isinstance(i, bool) for i in items):
            return self.add(IntListValue(tuple(int(i) for i in items)))
        if kind == "float" and all(isinstance(i, (int, float)) for i in items):
            return self.add(DoubleListValue(tuple(float(i) for i in items)))
        raise ExportError(f"{where}: cannot encode list {items!r}")

    def _symbolic_int_list(self, node: Node, items: list[Any], where: str) -> int:
        """An int list some of whose items are computed when the program runs: the method fills
        them in from their Int values before the instruction."""
        hints, sources = [], []
        for i in items:
            if isinstance(i, Node):
                index = self._node_index(i, node)
                v = self.values[index]
                if not isinstance(v, IntValue):
                    raise ExportError(f"{where}: list item {i.name} is not an int")
                hints.append(v.val)
                sources.append(index)
            elif isinstance(i, int) and not isinstance(i, bool):
                hints.append(int(i))
                sources.append(-1)
            else:
                raise ExportError(f"{where}: cannot encode list item {i!r}")
        return self.add(IntListValue(tuple(hints), tuple(sources)))

    # --- outputs --------------------------------------------------------------------------------

    def lower_outputs(self, node: Node) -> None:
        specs = self.ep.graph_signature.output_specs
        for s in specs:
            if s.kind == OutputKind.USER_INPUT_MUTATION:
                raise ExportError(
                    f"the program mutates its input {s.target}; etrt supports read-only inputs "
                    "only (keep the state in a registered buffer instead)"
                )
        bad = [
            s for s in specs if s.kind not in (OutputKind.USER_OUTPUT, OutputKind.BUFFER_MUTATION)
        ]
        if bad:
            kinds = ", ".join(sorted({s.kind.name for s in bad}))
            raise ExportError(f"the program has {kinds} outputs, which etrt does not run")
        results = node.args[0]
        if not isinstance(results, (list, tuple)):
            results = (results,)
        updates: list[tuple[int, int]] = []  # (state, new value)
        for spec, r in zip(specs, results, strict=True):
            if not isinstance(r, Node):
                raise ExportError(
                    f"output {r!r} is not a tensor; etrt programs return tensors only"
                )
            index = self._node_index(r, node)
            if not isinstance(self.values[index], TensorValue):
                raise ExportError(f"output {r.name} is not a tensor")
            if spec.kind == OutputKind.BUFFER_MUTATION:
                assert spec.target is not None
                updates.append((self.state[spec.target], index))
            else:
                self.outputs.append(index)
        # Everything that reads a state's memory after the updates below must read a copy made
        # before them: outputs in state memory, new values that are (views of) another state.
        for i, out in enumerate(self.outputs):
            if self._in_state(out):
                self.outputs[i] = self._clone(out, node.name)
        updates = [
            (st, new if new == st or not self._in_state(new) else self._clone(new, node.name))
            for st, new in updates
        ]
        for st, new in updates:
            if new != st:  # computed elsewhere: copied into the state at the end
                non_blocking = self.add(BoolValue(False))
                self.instructions.append(
                    KernelCall(self._op_index("aten::copy"), (st, new, non_blocking, st), 1,
                               node=node.name)
                )  # fmt: skip

    def _in_state(self, index: int) -> bool:
        root = self.values[storage_root_of(self.values, index)]
        return isinstance(root, TensorValue) and root.storage == StorageKind.STATE

    def _clone(self, index: int, where: str) -> int:
        t = self.values[index]
        assert isinstance(t, TensorValue)
        planned = replace(
            t, storage=StorageKind.PLANNED, dim_order=(), view_of=None, constant_segment=0,
            zero_initial=False, name=f"{t.name}.copy",
        )  # fmt: skip
        copy = self.add(planned)
        fmt = self.add(NullValue())
        self.instructions.append(KernelCall(self._op_index("aten::clone"), (index, fmt, copy), 1,
                                            node=where))  # fmt: skip
        return copy

    def run(self) -> LoweredProgram:
        self.lower_placeholders()
        for node in self.ep.graph.nodes:
            if node.op == "call_function":
                self.lower_call(node)
            elif node.op == "output":
                self.lower_outputs(node)
            elif node.op != "placeholder":
                raise ExportError(f"node {node.name}: unsupported graph node kind {node.op}")
        if self.missing and not self.allow_missing_ops:
            listed = ", ".join(
                f"{op} (node {', '.join(nodes)})" for op, nodes in self.missing.items()
            )
            raise MissingOpsError(listed, tuple(self.missing))
        plan = ExecutionPlan(
            name="forward",
            values=self.values,
            inputs=self.inputs,
            outputs=self.outputs,
            operators=self.operators,
            instructions=self.instructions,
        )
        return LoweredProgram(plan, self.segments, sorted(self.missing), self.external)


def _effectful_refusal(graph: torch.fx.Graph) -> str:
    """Names the user's operator behind a side-effecting op (a TOKEN input), e.g.
    torch.linalg.inv, whose decomposition checks its input through aten._linalg_check_errors."""
    found: list[str] = []
    for node in graph.nodes:
        if node.op != "call_function" or "with_effects" not in str(node.target):
            continue
        effect = str(node.args[1]).removesuffix(".default") if len(node.args) > 1 else "?"
        torch_fn = node.meta.get("torch_fn")
        user_op = f"aten::{str(torch_fn[1]).rpartition('.')[2]}" if torch_fn else "an operator"
        trace = str(node.meta.get("stack_trace") or "").strip().splitlines()
        at = re.findall(r'File "([^"]+)", line (\d+)', "\n".join(trace))
        where = f" at {Path(at[-1][0]).name}:{at[-1][1]} ({trace[-1].strip()})" if at else ""
        found.append(f"{user_op}{where} decomposes to the side-effecting {effect}")
    what = "; ".join(found) or "the graph holds a side-effecting op (an effect token)"
    return f"lowering to etrt failed: {what}, which etrt programs cannot hold"


def storage_root_of(values: list[Value], index: int) -> int:
    """The value owning the memory `index` refers to (views followed to their base)."""
    seen = 0
    v = values[index]
    while isinstance(v, TensorValue) and v.storage == StorageKind.VIEW and v.view_of is not None:
        index = v.view_of
        v = values[index]
        seen += 1
        if seen > len(values):
            raise ExportError("cycle in view chain")
    return index


def _scalar_value(v: bool | int | float) -> Value:
    if isinstance(v, bool):
        return BoolValue(v)
    if isinstance(v, int):
        return IntValue(v)
    return DoubleValue(float(v))


def _dead_nodes(ep: ExportedProgram) -> set[str]:
    """Nodes etrt does not run: torch's runtime asserts (the input bounds are checked when an
    input is set) and whatever only feeds them (size arithmetic, or tensors such as
    `_is_all_true` under a model's own `torch._assert`)."""
    dead: set[str] = set()
    for node in reversed(list(ep.graph.nodes)):
        if node.op != "call_function":
            continue
        target = node.target
        is_assert = isinstance(target, torch._ops.OpOverload) and op_name(target) in _ASSERT_OPS
        scalar = target in PRIM_OPS or is_symbolic(node.meta.get("val"))
        feeds_dead = all(u.name in dead for u in node.users)
        if is_assert or (scalar and feeds_dead) or (node.users and feeds_dead):
            dead.add(node.name)
    return dead


def _is_scalar_result_op(target: object) -> bool:
    """Tensor.item(): a kernel reading a tensor's value, not arithmetic on sizes, though torch
    gives its result a symbol (an unbacked one)."""
    return isinstance(target, torch._ops.OpOverload) and op_name(target) in _ops.SCALAR_RESULT_OPS


def _infer_list_kind(items: list[Any]) -> str:
    if items and all(isinstance(i, Node) for i in items):
        return "tensor"
    if any(i is None for i in items):
        return "opt_tensor"
    if all(isinstance(i, bool) for i in items):
        return "bool"
    if all(isinstance(i, int) for i in items):
        return "int"
    return "float"


def lower(
    ep: ExportedProgram, *, allow_missing_ops: bool = False, external_constants: bool = False
) -> LoweredProgram:
    return _Lowerer(ep, allow_missing_ops, external_constants).run()


__all__ = ["LoweredProgram", "lower"]
