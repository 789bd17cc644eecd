"""An ExportedProgram (core ATen) -> an ExecutionPlan plus constant segments.

Walks the graph once: placeholders become input/constant tensors, every ATen call becomes a kernel
call whose arguments follow the op's schema (defaults filled in) followed by its outputs.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass, field, replace
from typing import Any

import torch
from torch.export import ExportedProgram
from torch.export.graph_signature import InputKind, OutputKind
from torch.fx import Node

from . import _ops
from .errors import ExportError
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
)

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


def _static_sizes(shape: Any, what: str) -> tuple[int, ...]:
    sizes = []
    for s in shape:
        if not isinstance(s, int):
            raise ExportError(f"{what} has a dynamic dimension ({s}); etrt needs static shapes")
        sizes.append(int(s))
    return tuple(sizes)


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
        if len(node.args) > 6 and node.args[6]:
            raise _refuse(node, name, "transposed convolution has no etrt kernel")
        weight = node.args[1].meta.get("val") if isinstance(node.args[1], Node) else None
        if isinstance(weight, torch.Tensor) and weight.dim() > 4:
            raise _refuse(node, name, "3-D convolution has no etrt kernel (1-D and 2-D have)")
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


def dim_order_of(val: torch.Tensor) -> tuple[int, ...]:
    """The order of `val`'s dimensions in memory, outermost first, when its strides are a
    permutation of contiguous strides; the contiguous order otherwise."""
    sizes, strides = tuple(val.shape), tuple(val.stride())
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
            elif spec.kind in _CONSTANT_KINDS:
                self.node_value[node.name] = self._constant(node.name, spec.target)
            else:
                raise ExportError(f"input {node.name} of kind {spec.kind.name} is not supported")

    def _constant(self, name: str, target: str | None) -> int:
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
        data = tensor.detach().to("cpu").contiguous()
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
        return TensorValue(
            scalar_type=scalar_type_of(val.dtype, f"tensor {name}"),
            sizes=_static_sizes(val.shape, f"tensor {name}"),
            storage=storage,
            dim_order=dim_order_of(val) if storage == StorageKind.PLANNED else (),
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
        if target is operator.getitem:
            self._lower_getitem(node)
            return
        if not isinstance(target, torch._ops.OpOverload):
            raise ExportError(f"node {node.name} calls {target!r}, which is not an ATen operator")
        name = op_name(target)
        if name in _ASSERT_OPS:
            return
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
            return self._node_index(value, node)
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
        if isinstance(value, (torch.SymInt, torch.SymFloat, torch.SymBool)):
            raise ExportError(f"{where}: symbolic value {value}; etrt needs static shapes")
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
            if isinstance(i, (torch.SymInt, torch.SymFloat, torch.SymBool)):
                raise ExportError(f"{where}: symbolic value {i}; etrt needs static shapes")
        if kind == "bool" and all(isinstance(i, bool) for i in items):
            return self.add(BoolListValue(tuple(items)))
        if kind == "int" and all(isinstance(i, int) and not isinstance(i, bool) for i in items):
            return self.add(IntListValue(tuple(int(i) for i in items)))
        if kind == "float" and all(isinstance(i, (int, float)) for i in items):
            return self.add(DoubleListValue(tuple(float(i) for i in items)))
        raise ExportError(f"{where}: cannot encode list {items!r}")

    # --- outputs --------------------------------------------------------------------------------

    def lower_outputs(self, node: Node) -> None:
        specs = self.ep.graph_signature.output_specs
        bad = [s for s in specs if s.kind != OutputKind.USER_OUTPUT]
        if bad:
            kinds = ", ".join(sorted({s.kind.name for s in bad}))
            raise ExportError(
                f"the program mutates state ({kinds}); etrt supports pure functions only"
            )
        results = node.args[0]
        if not isinstance(results, (list, tuple)):
            results = (results,)
        for r in results:
            if not isinstance(r, Node):
                raise ExportError(
                    f"output {r!r} is not a tensor; etrt programs return tensors only"
                )
            index = self._node_index(r, node)
            if not isinstance(self.values[index], TensorValue):
                raise ExportError(f"output {r.name} is not a tensor")
            self.outputs.append(index)

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
            raise ExportError(
                f"no etrt kernel for {listed}; pass allow_missing_ops=True to export anyway"
            )
        plan = ExecutionPlan(
            name="forward",
            values=self.values,
            inputs=self.inputs,
            outputs=self.outputs,
            operators=self.operators,
            instructions=self.instructions,
        )
        return LoweredProgram(plan, self.segments, sorted(self.missing), self.external)


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
