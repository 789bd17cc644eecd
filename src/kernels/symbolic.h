// Kernels on symbolic sizes: the shape queries and the int arithmetic torch.export leaves in a
// program with dynamic shapes. They read and write scalar Values (Int, Double, Bool), never
// tensor data. Arguments follow the schema (or the Python operator), then the output.
#pragma once

#include "etrt/runtime/kernel.h"
#include "etrt/runtime/span.h"
#include "etrt/runtime/value.h"

namespace etrt {
namespace kernels {

void op_sym_size_int(KernelContext& ctx, Span<Value*> args);         // self, dim | out (int)
void op_sym_numel(KernelContext& ctx, Span<Value*> args);            // self | out (int)
void op_sym_stride_int(KernelContext& ctx, Span<Value*> args);       // self, dim | out (int)

// etrt_prim::*: Python's operators on ints, floats and bools, with Python's semantics (floor
// division and modulo round toward negative infinity).
void op_prim_add(KernelContext& ctx, Span<Value*> args);        // a, b | out
void op_prim_sub(KernelContext& ctx, Span<Value*> args);        // a, b | out
void op_prim_mul(KernelContext& ctx, Span<Value*> args);        // a, b | out
void op_prim_floordiv(KernelContext& ctx, Span<Value*> args);   // a, b | out
void op_prim_mod(KernelContext& ctx, Span<Value*> args);        // a, b | out
void op_prim_truediv(KernelContext& ctx, Span<Value*> args);    // a, b | out (double)
void op_prim_pow(KernelContext& ctx, Span<Value*> args);        // a, b | out
void op_prim_max(KernelContext& ctx, Span<Value*> args);        // a, b | out
void op_prim_min(KernelContext& ctx, Span<Value*> args);        // a, b | out
void op_prim_neg(KernelContext& ctx, Span<Value*> args);        // a | out
void op_prim_sym_float(KernelContext& ctx, Span<Value*> args);  // a | out (double)
void op_prim_sym_int(KernelContext& ctx, Span<Value*> args);    // a | out (int, truncated)
void op_prim_ceil(KernelContext& ctx, Span<Value*> args);       // a | out (int)
void op_prim_floor(KernelContext& ctx, Span<Value*> args);      // a | out (int)
void op_prim_sym_not(KernelContext& ctx, Span<Value*> args);    // a | out (bool)
void op_prim_eq(KernelContext& ctx, Span<Value*> args);         // a, b | out (bool)
void op_prim_ne(KernelContext& ctx, Span<Value*> args);         // a, b | out (bool)
void op_prim_lt(KernelContext& ctx, Span<Value*> args);         // a, b | out (bool)
void op_prim_le(KernelContext& ctx, Span<Value*> args);         // a, b | out (bool)
void op_prim_gt(KernelContext& ctx, Span<Value*> args);         // a, b | out (bool)
void op_prim_ge(KernelContext& ctx, Span<Value*> args);         // a, b | out (bool)

}  // namespace kernels
}  // namespace etrt
