#include "etrt/runtime/method.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>

#include "etrt/runtime/log.h"
#include "etrt/runtime/parallel.h"
#include "method_state.h"

namespace etrt {
namespace detail {
namespace {

std::string str(uint64_t v) { return std::to_string(v); }

std::string sizes_to_string(Span<const int64_t> sizes) {
  std::string out = "[";
  for (size_t i = 0; i < sizes.size(); ++i) out += (i ? ", " : "") + std::to_string(sizes[i]);
  return out + "]";
}

// Int lists with items computed at run time.
const flatbuffers::Vector<int32_t>* symbolic_items(const fb::Value* v) {
  const fb::IntList* l = v->val_as_IntList();
  return l != nullptr && l->item_values() != nullptr && l->item_values()->size() > 0 ? l->item_values() : nullptr;
}

// Bounds of a tensor slot: a dynamic input's from the file, [0, sizes] for another dynamic
// tensor, exactly its sizes for a static one.
SizeBounds bounds_of(const fb::Tensor* t, const Tensor& planned) {
  SizeBounds b;
  b.dynamic = t != nullptr && t->dynamic();
  b.max.assign(planned.sizes().begin(), planned.sizes().end());
  b.min = b.dynamic ? std::vector<int64_t>(b.max.size(), 0) : b.max;
  if (b.dynamic && t->min_sizes() != nullptr && t->max_sizes() != nullptr) {
    b.min.assign(t->min_sizes()->begin(), t->min_sizes()->end());
    b.max.assign(t->max_sizes()->begin(), t->max_sizes()->end());
  }
  return b;
}

bool is_planned_or_view(const fb::Value* v) {
  const fb::Tensor* t = v->val_as_Tensor();
  return t != nullptr && (t->storage() == fb::StorageKind::Planned || t->storage() == fb::StorageKind::View);
}

size_t list_size(const fb::Value* v) {
  if (const auto* l = v->val_as_TensorList()) return l->items() ? l->items()->size() : 0;
  if (const auto* l = v->val_as_OptionalTensorList()) return l->items() ? l->items()->size() : 0;
  return 0;
}

const flatbuffers::Vector<int32_t>* list_items(const fb::Value* v) {
  if (const auto* l = v->val_as_TensorList()) return l->items();
  if (const auto* l = v->val_as_OptionalTensorList()) return l->items();
  return nullptr;
}

const flatbuffers::Vector<int32_t>* instruction_args(const fb::Instruction* instr) {
  if (const auto* k = instr->call_as_KernelCall()) return k->args();
  if (const auto* d = instr->call_as_DelegateCall()) return d->args();
  return nullptr;
}

}  // namespace

// Where an empty tensor's data points when it has no memory of its own: never read, but a
// kernel may offset it (a null pointer plus an offset is undefined, even unread).
void* empty_data() {
  alignas(64) static uint8_t none[64];
  return none;
}

namespace {

// What a method may not hold beyond LoadOptions::max_memory_bytes, as one message.
Error over_budget(const std::string& where, const std::string& what, uint64_t bytes, uint64_t budget) {
  return Error(ErrorCode::OutOfMemory, where + what + " needs " + str(bytes) + " bytes, more than the " + str(budget) +
                                           "-byte memory budget (LoadOptions::max_memory_bytes, ETRT_MAX_MEMORY_BYTES)");
}

}  // namespace

RunContext::~RunContext() {
  for (void* p : overflow_) std::free(p);
  std::free(scratch_);
  for (Cache& c : caches_) std::free(c.data);
}

bool RunContext::drop_caches() noexcept {
  if (cache_bytes_ == 0) return false;
  caches_off_ = true;
  bool dropped = false;
  for (size_t i = 0; i < caches_.size(); ++i) {
    if (i == current_ || caches_[i].data == nullptr) continue;  // the running kernel's is in use
    std::free(caches_[i].data);
    cache_bytes_ -= caches_[i].nbytes;
    caches_[i] = Cache();
    dropped = true;
  }
  return dropped;
}

void* RunContext::instruction_cache(uint64_t key, size_t nbytes, bool* reused) {
  *reused = false;
  if (current_ >= caches_.size() || nbytes == 0) return nullptr;
  Cache& c = caches_[current_];
  if (c.data != nullptr && c.key == key && c.nbytes == nbytes) {
    *reused = true;
    return c.data;
  }
  std::free(c.data);
  cache_bytes_ -= c.nbytes;
  c = Cache();
  // Kept blocks and the scratch buffer (as large as the largest call needed) share the method's
  // budget for scratch memory.
  const size_t rounded = (nbytes + 63) / 64 * 64;
  const size_t scratch = std::max(used_, capacity_);
  if (caches_off_ || rounded < nbytes || cache_bytes_ > limit_ || rounded > limit_ - cache_bytes_ ||
      scratch > limit_ - cache_bytes_ - rounded) {
    return nullptr;
  }
  void* p = nullptr;
  if (posix_memalign(&p, 64, rounded) != 0) return nullptr;
  c = Cache{key, nbytes, p};
  cache_bytes_ += nbytes;
  return p;
}

void* RunContext::allocate_temp(size_t nbytes, size_t alignment) {
  if (alignment == 0 || (alignment & (alignment - 1)) != 0) return nullptr;
  if (alignment < alignof(std::max_align_t)) alignment = alignof(std::max_align_t);
  if (nbytes == 0) nbytes = 1;
  // Within the method's budget: what this instruction took so far plus this request.
  const auto fits = [&] {
    const size_t limit = limit_ - std::min(limit_, cache_bytes_);  // less what instruction caches keep
    return alignment <= limit && nbytes <= limit - alignment && used_ <= limit - alignment - nbytes;
  };
  // Scratch memory comes first: other instructions' kept blocks are dropped for it, and the
  // method keeps none from then on (its budget holds its scratch memory, not both).
  if (!fits() && (!drop_caches() || !fits())) return nullptr;
  if (overflow_.empty() && scratch_ != nullptr) {
    uintptr_t base = reinterpret_cast<uintptr_t>(scratch_);
    uintptr_t start = (base + used_ + alignment - 1) & ~(uintptr_t{alignment} - 1);
    size_t offset = start - base;
    if (offset <= capacity_ && nbytes <= capacity_ - offset) {
      used_ = offset + nbytes;
      return scratch_ + offset;
    }
  }
  // Does not fit: serve from the heap this once and remember how much was needed.
  size_t rounded = (nbytes + alignment - 1) / alignment * alignment;
  void* p = nullptr;
  if (posix_memalign(&p, alignment, rounded) != 0) return nullptr;
  try {
    overflow_.push_back(p);
  } catch (...) {
    std::free(p);
    return nullptr;
  }
  used_ += alignment + nbytes;
  return p;
}

void RunContext::grow() noexcept {
  for (void* p : overflow_) std::free(p);
  overflow_.clear();
  size_t want = std::min((std::max(used_, capacity_ * 2) + 63) / 64 * 64,
                         (limit_ - std::min(limit_, cache_bytes_)) / 64 * 64);
  std::free(scratch_);
  scratch_ = nullptr;
  capacity_ = 0;
  void* p = nullptr;
  if (posix_memalign(&p, 64, want) == 0) {
    scratch_ = static_cast<uint8_t*>(p);
    capacity_ = want;
  }
}

void RunContext::fail(Error error) {
  if (current_ < caches_.size() && caches_[current_].data != nullptr) {  // maybe half written
    std::free(caches_[current_].data);
    cache_bytes_ -= caches_[current_].nbytes;
    caches_[current_] = Cache();
  }
  if (!error_.ok()) return;  // keep the first failure
  error_ = error.ok() ? Error(ErrorCode::KernelFailed, "kernel failed without saying why") : std::move(error);
}

void MethodState::reset_states() noexcept {
  for (const StateSlot& slot : states) {
    if (slot.initial != nullptr) {
      std::memcpy(slot.data, slot.initial, slot.nbytes);
    } else {
      std::memset(slot.data, 0, slot.nbytes);
    }
  }
}

MethodState::~MethodState() {
  for (DelegateState& d : delegates) {
    if (d.initialized) d.backend->destroy(d.handle);
  }
}

// Data of every External tensor, by value index (null elsewhere). All keys the map lacks are
// reported in one NotFound error; a tensor whose stored dtype, shape or layout differs from the
// program's is an InvalidArgument naming it.
static Error resolve_external(const fb::ExecutionPlan& plan, const NamedDataMap* map, const std::string& where,
                       std::vector<const uint8_t*>* out) {
  const size_t n = plan.values() ? plan.values()->size() : 0;
  out->assign(n, nullptr);
  std::vector<std::string> missing;
  for (size_t i = 0; i < n; ++i) {
    const fb::Tensor* t = plan.values()->Get(static_cast<flatbuffers::uoffset_t>(i))->val_as_Tensor();
    if (t == nullptr || t->storage() != fb::StorageKind::External) continue;
    const std::string_view key = t->external_key()->string_view();
    auto info = map == nullptr ? Result<NamedTensorInfo>(Error(ErrorCode::NotFound, "")) : map->tensor_info(key);
    if (!info.ok()) {
      missing.push_back(printable(key));
      continue;
    }
    TensorLayout layout;
    ETRT_RETURN_IF_ERROR(compute_layout(*t, &layout));
    bool same = static_cast<ScalarType>(t->scalar_type()) == info->dtype &&
                info->sizes.size() == static_cast<size_t>(layout.dim);
    for (int d = 0; same && d < layout.dim; ++d) same = info->sizes[static_cast<size_t>(d)] == layout.sizes[d];
    // Same layout: the map's dim_order (empty: contiguous) gives the program's strides.
    int64_t stride = 1;
    for (size_t k = static_cast<size_t>(layout.dim); same && k-- > 0;) {
      const size_t d = info->dim_order.empty() ? k : info->dim_order[k];
      same = layout.sizes[d] <= 1 || layout.strides[d] == stride;
      stride *= std::max<int64_t>(layout.sizes[d], 1);
    }
    if (!same) {
      return Error(ErrorCode::InvalidArgument,
                   where + "external tensor '" + printable(key) + "' is " + to_string(info->dtype) + " " +
                       sizes_to_string(info->sizes) + " in the data map, but the program expects " +
                       to_string(static_cast<ScalarType>(t->scalar_type())) + " " +
                       sizes_to_string(Span<const int64_t>(layout.sizes, static_cast<size_t>(layout.dim))) +
                       " in its layout");
    }
    ETRT_ASSIGN_OR_RETURN(Span<const uint8_t> bytes, map->data(key));
    (*out)[i] = bytes.data();
  }
  if (!missing.empty()) {
    std::sort(missing.begin(), missing.end());
    missing.erase(std::unique(missing.begin(), missing.end()), missing.end());
    std::string msg = where + (map == nullptr ? "no named data map given for external tensors: "
                                              : "external tensors missing from the named data map: ");
    for (size_t i = 0; i < missing.size(); ++i) msg += (i ? ", " : "") + missing[i];
    return Error(ErrorCode::NotFound, msg + " (load the method with the program's .ptd)");
  }
  return Error();
}

Result<std::unique_ptr<MethodState>> MethodState::create(std::shared_ptr<const ProgramData> program,
                                                         const fb::ExecutionPlan& plan,
                                                         MemoryAllocator* allocator,
                                                         const NamedDataMap* data_map,
                                                         uint64_t budget) noexcept try {
  auto s = std::make_unique<MethodState>();
  s->program = std::move(program);
  s->plan = &plan;
  s->name = plan.name()->str();
  std::string where = "method '" + printable(s->name) + "': ";

  // Resolve every operator and backend first, so a missing one is reported before any
  // memory is committed, all in one error.
  std::vector<KernelFn> kernels;
  std::vector<std::string> missing;
  if (plan.operators() != nullptr) {
    for (const fb::Operator* op : *plan.operators()) {
      std::string name = op->name()->str();
      KernelFn fn = find_kernel(name);
      if (fn == nullptr) missing.push_back(printable(name));
      kernels.push_back(fn);
      s->op_names.push_back(std::move(name));
    }
  }
  if (!missing.empty()) {
    std::sort(missing.begin(), missing.end());
    missing.erase(std::unique(missing.begin(), missing.end()), missing.end());
    std::string msg = "missing operators: ";
    for (size_t i = 0; i < missing.size(); ++i) msg += (i ? ", " : "") + missing[i];
    return Error(ErrorCode::OperatorMissing, msg + " (link etrt::kernels_optimized)");
  }
  if (plan.delegates() != nullptr) {
    std::vector<std::string> missing_backends;
    for (const fb::BackendDelegate* d : *plan.delegates()) {
      DelegateState state;
      state.backend = find_backend(d->id()->string_view());
      if (state.backend == nullptr) {
        missing_backends.push_back(printable(d->id()->string_view()));
      } else if (!state.backend->is_available()) {
        return Error(ErrorCode::BackendMissing,
                     "backend '" + printable(d->id()->string_view()) + "' is registered but not available on this machine");
      }
      s->delegates.push_back(state);
    }
    if (!missing_backends.empty()) {
      std::sort(missing_backends.begin(), missing_backends.end());
      missing_backends.erase(std::unique(missing_backends.begin(), missing_backends.end()), missing_backends.end());
      std::string msg = "missing backends: ";
      for (size_t i = 0; i < missing_backends.size(); ++i) msg += (i ? ", " : "") + missing_backends[i];
      return Error(ErrorCode::BackendMissing, msg + " (link the library that registers them, e.g. etrt::backend_xnnpack)");
    }
  }

  std::vector<const uint8_t*> external;
  ETRT_RETURN_IF_ERROR(resolve_external(plan, data_map, where, &external));

  if (!allocator) {
    s->owned_allocator = std::make_unique<MallocAllocator>();
    allocator = s->owned_allocator.get();
  }
  if (plan.arena_size() > budget) return over_budget(where, "the arena", plan.arena_size(), budget);
  uint64_t remaining = budget - plan.arena_size();
  if (plan.arena_size() > 0) {
    s->arena = static_cast<uint8_t*>(allocator->allocate(static_cast<size_t>(plan.arena_size()), 64));
    if (s->arena == nullptr) {
      return Error(ErrorCode::OutOfMemory, where + "cannot allocate the " + str(plan.arena_size()) + "-byte arena");
    }
    // Zeroed: memory an instruction reads before any writes it is zeros, not stale heap bytes.
    std::memset(s->arena, 0, static_cast<size_t>(plan.arena_size()));
  }

  // Values. Pools are sized up front so the spans pointing into them stay valid.
  size_t n = plan.values() ? plan.values()->size() : 0;
  size_t list_total = 0, bool_total = 0, int_total = 0;
  for (size_t i = 0; i < n; ++i) {
    const fb::Value* v = plan.values()->Get(static_cast<flatbuffers::uoffset_t>(i));
    list_total += list_size(v);
    if (const auto* b = v->val_as_BoolList()) bool_total += b->items() ? b->items()->size() : 0;
    if (symbolic_items(v) != nullptr) int_total += v->val_as_IntList()->items()->size();
  }
  s->values.resize(n);
  s->list_pool.reserve(list_total);
  s->bool_pool.reset(new bool[bool_total + 1]);
  s->int_pool.reset(new int64_t[int_total + 1]);
  size_t bool_used = 0, int_used = 0;
  // Symbolic items of each int list, [begin, end) in `list_fixups`; copied per instruction.
  std::vector<IntFixup> list_fixups;
  std::vector<std::pair<uint32_t, uint32_t>> fixup_range(n, {0, 0});
  for (size_t i = 0; i < n; ++i) {
    const fb::Value* v = plan.values()->Get(static_cast<flatbuffers::uoffset_t>(i));
    Value& out = s->values[i];
    switch (v->val_type()) {
      case fb::ValueUnion::Int: out = Value(static_cast<int64_t>(v->val_as_Int()->val())); break;
      case fb::ValueUnion::Double: out = Value(v->val_as_Double()->val()); break;
      case fb::ValueUnion::Bool: out = Value(v->val_as_Bool()->val()); break;
      case fb::ValueUnion::String: {
        const flatbuffers::String* sv = v->val_as_String()->val();
        out = Value::string(sv ? sv->string_view() : std::string_view());
        break;
      }
      case fb::ValueUnion::IntList: {
        const auto* items = v->val_as_IntList()->items();
        if (const auto* symbolic = symbolic_items(v)) {
          // A private copy the method fills in before each instruction that reads it.
          int64_t* dst = s->int_pool.get() + int_used;
          int_used += items->size();
          fixup_range[i].first = static_cast<uint32_t>(list_fixups.size());
          for (flatbuffers::uoffset_t k = 0; k < items->size(); ++k) {
            dst[k] = items->Get(k);
            const int32_t src = symbolic->Get(k);
            if (src >= 0) {
              list_fixups.push_back(IntFixup{dst + k, &s->values[static_cast<size_t>(src)], static_cast<uint32_t>(src)});
            }
          }
          fixup_range[i].second = static_cast<uint32_t>(list_fixups.size());
          out = Value::int_list(Span<const int64_t>(dst, items->size()));
          break;
        }
        out = Value::int_list(items ? Span<const int64_t>(items->data(), items->size()) : Span<const int64_t>());
        break;
      }
      case fb::ValueUnion::DoubleList: {
        const auto* items = v->val_as_DoubleList()->items();
        out = Value::double_list(items ? Span<const double>(items->data(), items->size()) : Span<const double>());
        break;
      }
      case fb::ValueUnion::BoolList: {
        const auto* items = v->val_as_BoolList()->items();
        size_t count = items ? items->size() : 0;
        bool* dst = s->bool_pool.get() + bool_used;
        for (size_t k = 0; k < count; ++k) dst[k] = items->Get(static_cast<flatbuffers::uoffset_t>(k)) != 0;
        bool_used += count;
        out = Value::bool_list(Span<const bool>(dst, count));
        break;
      }
      case fb::ValueUnion::TensorList:
      case fb::ValueUnion::OptionalTensorList: {
        const auto* items = list_items(v);
        size_t start = s->list_pool.size();
        if (items != nullptr) {
          for (int32_t item : *items) s->list_pool.push_back(&s->values[static_cast<size_t>(item)]);
        }
        Span<Value* const> span(s->list_pool.data() + start, s->list_pool.size() - start);
        out = v->val_type() == fb::ValueUnion::TensorList ? Value::tensor_list(span) : Value::optional_tensor_list(span);
        break;
      }
      case fb::ValueUnion::Tensor: {
        const fb::Tensor* t = v->val_as_Tensor();
        TensorLayout layout;
        ETRT_RETURN_IF_ERROR(compute_layout(*t, &layout));
        // Views and inputs too: a kernel's work follows the sizes it is given, memory or not.
        // (Constants are bounded by the file that holds them.)
        const bool in_file = t->storage() == fb::StorageKind::Constant || t->storage() == fb::StorageKind::External;
        if (!in_file && layout.nbytes > budget) return over_budget(where, "value " + str(i), layout.nbytes, budget);
        void* data = nullptr;
        if (t->storage() == fb::StorageKind::Planned || t->storage() == fb::StorageKind::State) {
          data = s->arena == nullptr ? empty_data() : s->arena + t->mem_offset();
        } else if (t->storage() == fb::StorageKind::Constant) {
          data = const_cast<uint8_t*>(s->program->segment_data(t->constant_segment()));
        } else if (t->storage() == fb::StorageKind::External) {
          data = const_cast<uint8_t*>(external[i]);
        }
        auto tensor = Tensor::make(data, static_cast<ScalarType>(t->scalar_type()),
                                   Span<const int64_t>(layout.sizes, static_cast<size_t>(layout.dim)),
                                   Span<const int64_t>(layout.strides, static_cast<size_t>(layout.dim)));
        if (!tensor.ok()) return Error(ErrorCode::InvalidProgram, where + "value " + str(i) + ": " + tensor.error().message());
        tensor->set_read_only(t->storage() == fb::StorageKind::Constant || t->storage() == fb::StorageKind::External);
        tensor->set_dynamic(t->dynamic());
        if (t->storage() == fb::StorageKind::State && layout.nbytes > 0) {
          const uint8_t* initial = t->zero_initial() ? nullptr : s->program->segment_data(t->constant_segment());
          s->states.push_back(StateSlot{static_cast<uint8_t*>(data), initial, static_cast<size_t>(layout.nbytes)});
        }
        out = Value(*tensor);
        break;
      }
      default:
        out = Value();
        break;
    }
  }

  if (plan.inputs() != nullptr) {
    for (int32_t index : *plan.inputs()) {
      s->inputs.push_back(static_cast<uint32_t>(index));
      const Value& v = s->values[static_cast<size_t>(index)];
      s->input_planned.push_back(v.is_tensor() ? v.to_tensor() : Tensor());
      s->input_bounds.push_back(bounds_of(plan.values()->Get(static_cast<flatbuffers::uoffset_t>(index))->val_as_Tensor(),
                                          s->input_planned.back()));
      // Scalars have a value from the program already; tensors need the caller's memory.
      s->input_set.push_back(!v.is_tensor());
    }
  }
  if (plan.outputs() != nullptr) {
    for (int32_t index : *plan.outputs()) s->outputs.push_back(static_cast<uint32_t>(index));
  }
  for (uint32_t index : s->outputs) {
    s->output_planned.push_back(s->values[index]);
    const Value& v = s->output_planned.back();
    s->output_bounds.push_back(bounds_of(plan.values()->Get(index)->val_as_Tensor(), v.is_tensor() ? v.to_tensor() : Tensor()));
  }

  // Instructions, with the outputs each one produces: a Planned or View tensor's first use
  // is where it is produced (the program is in execution order).
  size_t num_instructions = plan.instructions() ? plan.instructions()->size() : 0;
  size_t arg_total = 0;
  for (size_t i = 0; i < num_instructions; ++i) {
    const auto* args = instruction_args(plan.instructions()->Get(static_cast<flatbuffers::uoffset_t>(i)));
    arg_total += args ? args->size() : 0;
  }
  s->arg_pool.reserve(arg_total);
  s->instructions.reserve(num_instructions);
  std::vector<bool> produced(n, false);
  auto note_output = [&](size_t index) {
    const fb::Value* v = plan.values()->Get(static_cast<flatbuffers::uoffset_t>(index));
    if (produced[index] || !is_planned_or_view(v)) return;
    produced[index] = true;
    s->resets.push_back(Reset{&s->values[index], s->values[index].to_tensor()});
  };
  for (size_t i = 0; i < num_instructions; ++i) {
    const fb::Instruction* instr = plan.instructions()->Get(static_cast<flatbuffers::uoffset_t>(i));
    InstructionState st{};
    if (const auto* k = instr->call_as_KernelCall()) {
      st.fn = kernels[k->op_index()];
      st.index = k->op_index();
    } else {
      st.fn = nullptr;
      st.index = instr->call_as_DelegateCall()->delegate_index();
    }
    const auto* args = instruction_args(instr);
    st.args = s->arg_pool.data() + s->arg_pool.size();
    st.num_args = args ? args->size() : 0;
    st.reset_begin = static_cast<uint32_t>(s->resets.size());
    st.fixup_begin = static_cast<uint32_t>(s->fixups.size());
    if (args != nullptr) {
      for (int32_t a : *args) {
        size_t index = static_cast<size_t>(a);
        s->arg_pool.push_back(&s->values[index]);
        for (uint32_t f = fixup_range[index].first; f < fixup_range[index].second; ++f) s->fixups.push_back(list_fixups[f]);
        note_output(index);
        if (const auto* items = list_items(plan.values()->Get(static_cast<flatbuffers::uoffset_t>(index)))) {
          for (int32_t item : *items) note_output(static_cast<size_t>(item));
        }
      }
    }
    st.reset_end = static_cast<uint32_t>(s->resets.size());
    st.fixup_end = static_cast<uint32_t>(s->fixups.size());
    s->instructions.push_back(st);
  }
  s->produced.reserve(s->resets.size());
  for (const Reset& r : s->resets) s->produced.push_back(r.value);

  s->reset_states();

  // Delegates last: init() may be expensive and everything else is known good now.
  for (size_t d = 0; d < s->delegates.size(); ++d) {
    const fb::BackendDelegate* fd = plan.delegates()->Get(static_cast<flatbuffers::uoffset_t>(d));
    std::vector<CompileSpec> specs;
    if (fd->compile_specs() != nullptr) {
      for (const fb::CompileSpec* spec : *fd->compile_specs()) {
        Span<const uint8_t> value = spec->value() ? Span<const uint8_t>(spec->value()->data(), spec->value()->size())
                                                  : Span<const uint8_t>();
        specs.push_back(CompileSpec{spec->key()->string_view(), value});
      }
    }
    Span<const uint8_t> blob(s->program->segment_data(fd->segment()),
                             static_cast<size_t>(s->program->segment_size(fd->segment())));
    BackendInitContext context;
    context.max_memory_bytes = remaining;
    Result<void*> handle =
        s->delegates[d].backend->init(blob, Span<const CompileSpec>(specs.data(), specs.size()), context);
    if (!handle.ok()) {
      return Error(handle.error().code(), where + "delegate " + str(d) + " ('" + printable(fd->id()->string_view()) +
                                              "') failed to initialize: " + handle.error().message());
    }
    s->delegates[d].handle = *handle;
    s->delegates[d].initialized = true;
    if (context.memory_bytes > remaining) {
      return over_budget(where, "delegate " + str(d) + " ('" + printable(fd->id()->string_view()) + "')",
                         context.memory_bytes, remaining);
    }
    remaining -= context.memory_bytes;
  }
  // Kernels' scratch memory gets what is left.
  s->context.set_limit(static_cast<size_t>(std::min<uint64_t>(remaining, SIZE_MAX)));
  s->context.set_instructions(s->instructions.size());
  return s;
} catch (const std::bad_alloc&) {
  return Error(ErrorCode::OutOfMemory, "out of memory while loading a method");
}

TensorInfo info_of(const Tensor& planned, const SizeBounds& bounds) {
  TensorInfo info{planned.dtype(), planned.sizes(), planned.nbytes()};
  info.dynamic = bounds.dynamic;
  info.min_sizes = Span<const int64_t>(bounds.min.data(), bounds.min.size());
  info.max_sizes = Span<const int64_t>(bounds.max.data(), bounds.max.size());
  return info;
}

}  // namespace detail

using detail::MethodState;

Method::Method(std::unique_ptr<MethodState> state) noexcept : state_(std::move(state)) {}
Method::Method(Method&&) noexcept = default;
Method& Method::operator=(Method&&) noexcept = default;
Method::~Method() = default;

std::string_view Method::name() const noexcept { return state_->name; }
size_t Method::num_inputs() const noexcept { return state_->inputs.size(); }
size_t Method::num_outputs() const noexcept { return state_->outputs.size(); }

Tag Method::input_tag(size_t i) const noexcept {
  return i < state_->inputs.size() ? state_->values[state_->inputs[i]].tag() : Tag::None;
}

Result<TensorInfo> Method::input_tensor_info(size_t i) const noexcept {
  if (i >= state_->inputs.size()) {
    return Error(ErrorCode::InvalidArgument, "input " + std::to_string(i) + " out of range: method '" +
                                                 state_->name + "' has " + std::to_string(state_->inputs.size()));
  }
  if (!state_->values[state_->inputs[i]].is_tensor()) {
    return Error(ErrorCode::InvalidArgument, "input " + std::to_string(i) + " is not a tensor");
  }
  const Tensor& t = state_->input_planned[i];
  return detail::info_of(t, state_->input_bounds[i]);
}

Tag Method::output_tag(size_t i) const noexcept {
  return i < state_->output_planned.size() ? state_->output_planned[i].tag() : Tag::None;
}

Result<TensorInfo> Method::output_tensor_info(size_t i) const noexcept {
  if (i >= state_->outputs.size()) {
    return Error(ErrorCode::InvalidArgument, "output " + std::to_string(i) + " out of range: method '" +
                                                 state_->name + "' has " + std::to_string(state_->outputs.size()));
  }
  const Value& v = state_->output_planned[i];
  if (!v.is_tensor()) return Error(ErrorCode::InvalidArgument, "output " + std::to_string(i) + " is not a tensor");
  return detail::info_of(v.to_tensor(), state_->output_bounds[i]);
}

Error Method::check_input(size_t i, ScalarType dtype, Span<const int64_t> sizes) const noexcept try {
  const MethodState& s = *state_;
  std::string where = "input " + std::to_string(i);
  if (i >= s.inputs.size()) {
    return Error(ErrorCode::InvalidArgument,
                 where + " out of range: method '" + s.name + "' has " + std::to_string(s.inputs.size()) + " inputs");
  }
  const Value& v = s.values[s.inputs[i]];
  if (!v.is_tensor()) {
    return Error(ErrorCode::InvalidArgument, where + " expects " + to_string(v.tag()) + ", got a tensor");
  }
  const Tensor& planned = s.input_planned[i];
  if (dtype != planned.dtype()) {
    return Error(ErrorCode::InvalidArgument, where + ": expected dtype " + std::string(to_string(planned.dtype())) +
                                                 ", got " + to_string(dtype));
  }
  const detail::SizeBounds& bounds = s.input_bounds[i];
  const int ndim = static_cast<int>(sizes.size());
  if (bounds.dynamic) {
    if (ndim != planned.dim()) {
      return Error(ErrorCode::InvalidArgument, where + ": expected " + std::to_string(planned.dim()) +
                                                   " dimensions, got " + std::to_string(ndim) + " (sizes " +
                                                   detail::sizes_to_string(sizes) + ")");
    }
    for (int d = 0; d < planned.dim(); ++d) {
      const size_t k = static_cast<size_t>(d);
      if (sizes[k] < bounds.min[k] || sizes[k] > bounds.max[k]) {
        return Error(ErrorCode::InvalidArgument, where + " dim " + std::to_string(d) + ": size " +
                                                     std::to_string(sizes[k]) + " is outside [" +
                                                     std::to_string(bounds.min[k]) + ", " +
                                                     std::to_string(bounds.max[k]) + "]");
      }
    }
  } else {
    bool same = ndim == planned.dim();
    for (int d = 0; same && d < planned.dim(); ++d) same = sizes[static_cast<size_t>(d)] == planned.size(d);
    if (!same) {
      return Error(ErrorCode::InvalidArgument, where + ": expected sizes " + detail::sizes_to_string(planned.sizes()) +
                                                   ", got " + detail::sizes_to_string(sizes));
    }
  }
  return Error();
} catch (const std::bad_alloc&) {
  return Error(ErrorCode::OutOfMemory, "out of memory checking an input");
}

Error Method::set_input(size_t i, const Tensor& tensor) noexcept {
  MethodState& s = *state_;
  ETRT_ASSIGN_OR_RETURN(Reservation held, reserve());
  ETRT_RETURN_IF_ERROR(check_input(i, tensor.dtype(), tensor.sizes()));
  std::string where = "input " + std::to_string(i);
  Value& v = s.values[s.inputs[i]];
  const Tensor& planned = s.input_planned[i];
  if (!tensor.is_contiguous()) return Error(ErrorCode::InvalidArgument, where + " must be contiguous");
  if (tensor.nbytes() > 0) {
    if (tensor.data() == nullptr) return Error(ErrorCode::InvalidArgument, where + " has no data");
    if (reinterpret_cast<uintptr_t>(tensor.data()) % planned.element_size() != 0) {
      return Error(ErrorCode::InvalidArgument, where + ": data is not aligned to its element size");
    }
  }
  Tensor bound = planned;
  if (s.input_bounds[i].dynamic) ETRT_RETURN_IF_ERROR(bound.set_sizes_contiguous(tensor.sizes()));
  bound.set_data(tensor.data() == nullptr ? detail::empty_data() : tensor.data());
  v.to_tensor() = bound;
  s.input_set[i] = true;
  return Error();
}

Error Method::set_input(size_t i, const Value& value) noexcept {
  if (value.is_tensor()) return set_input(i, value.to_tensor());
  MethodState& s = *state_;
  ETRT_ASSIGN_OR_RETURN(Reservation held, reserve());
  std::string where = "input " + std::to_string(i);
  if (i >= s.inputs.size()) {
    return Error(ErrorCode::InvalidArgument,
                 where + " out of range: method '" + s.name + "' has " + std::to_string(s.inputs.size()) + " inputs");
  }
  Value& v = s.values[s.inputs[i]];
  if (v.tag() != value.tag()) {
    return Error(ErrorCode::InvalidArgument,
                 where + " expects " + to_string(v.tag()) + ", got " + to_string(value.tag()));
  }
  v = value;
  s.input_set[i] = true;
  return Error();
}

namespace detail {
namespace {

// The instruction loop, instantiated twice so that running without a tracer costs nothing
// per instruction.
template <bool kTraced>
Error run_instructions(MethodState& s, EventTracer* tracer) noexcept {
  const Reset* resets = s.resets.data();
  const IntFixup* fixups = s.fixups.data();
  const InstructionState* instrs = s.instructions.data();
  const size_t count = s.instructions.size();
  size_t i = 0;
  try {
    for (; i < count; ++i) {
      const InstructionState& in = instrs[i];
      for (uint32_t r = in.reset_begin; r < in.reset_end; ++r) {
        resets[r].value->to_tensor() = resets[r].planned;
      }
      for (uint32_t f = in.fixup_begin; f < in.fixup_end; ++f) {
        const IntFixup& fix = fixups[f];
        if (!fix.src->is_int()) {
          return Error(ErrorCode::InvalidProgram, "instruction " + std::to_string(i) + ": value " +
                                                      std::to_string(fix.value) + " should hold an int list item but is " +
                                                      to_string(fix.src->tag()));
        }
        *fix.dst = fix.src->to_int();
      }
      if (in.fn != nullptr) {
        if constexpr (kTraced) tracer->begin_operator(s.op_names[in.index], static_cast<uint32_t>(i));
        s.context.begin_instruction(i);
        in.fn(s.context, Span<Value*>(in.args, in.num_args));
        if constexpr (kTraced) {
          tracer->end_operator(s.op_names[in.index], static_cast<uint32_t>(i),
                               Span<const Value* const>(s.produced.data() + in.reset_begin, in.reset_end - in.reset_begin));
        }
        s.context.end_instruction();
        if (s.context.failed()) {
          Error e = s.context.take_error();
          return Error(e.code(), "instruction " + std::to_string(i) + " (" + printable(s.op_names[in.index]) +
                                     ") failed: " + e.message());
        }
      } else {
        DelegateState& d = s.delegates[in.index];
        std::string_view id;
        if constexpr (kTraced) {
          id = s.plan->delegates()->Get(in.index)->id()->string_view();
          tracer->begin_delegate(id, static_cast<uint32_t>(i));
        }
        Error e = d.backend->execute(d.handle, Span<Value*>(in.args, in.num_args));
        if constexpr (kTraced) {
          tracer->end_delegate(id, static_cast<uint32_t>(i),
                               Span<const Value* const>(s.produced.data() + in.reset_begin, in.reset_end - in.reset_begin));
        }
        if (!e.ok()) {
          return Error(e.code(), "instruction " + std::to_string(i) + " (delegate '" +
                                     printable(s.plan->delegates()->Get(in.index)->id()->string_view()) +
                                     "') failed: " + e.message());
        }
      }
    }
  } catch (...) {
    s.context.end_instruction();
    s.context.take_error();
    return Error(ErrorCode::Internal, "instruction " + std::to_string(i) + " threw an exception");
  }
  return Error();
}

}  // namespace
}  // namespace detail

Error Method::execute() noexcept {
  MethodState& s = *state_;
  ETRT_ASSIGN_OR_RETURN(Reservation held, reserve());
  for (size_t i = 0; i < s.inputs.size(); ++i) {
    if (!s.input_set[i]) {
      return Error(ErrorCode::InvalidState, "input " + std::to_string(i) + " of method '" + s.name + "' is not set");
    }
  }
  // Read once: another thread may attach or detach a tracer meanwhile.
  EventTracer* tracer = s.tracer.load(std::memory_order_acquire);
  Error e;
  // The pool keeps its workers ready between this run's operators, not after it.
  ParallelRunScope run_scope;
  if (tracer == nullptr) {
    e = detail::run_instructions<false>(s, nullptr);
  } else {
    tracer->begin_run(s.name);
    e = detail::run_instructions<true>(s, tracer);
    tracer->end_run(s.name, e.ok());
  }
  if (!e.ok()) return e;
  // Every output must point at memory by now; a view no kernel set would hand out none.
  for (size_t i = 0; i < s.outputs.size(); ++i) {
    const Value& v = s.values[s.outputs[i]];
    if (v.is_tensor() && v.to_tensor().data() == nullptr && v.to_tensor().numel() > 0) {
      return Error(ErrorCode::InvalidProgram, "method '" + s.name + "': output " + std::to_string(i) + " (value " +
                                                  std::to_string(s.outputs[i]) + ") has no memory after execute()");
    }
  }
  return e;
}

size_t Method::num_states() const noexcept { return state_->states.size(); }

Error Method::reset_state() noexcept {
  ETRT_ASSIGN_OR_RETURN(Reservation held, reserve());
  state_->reset_states();
  return Error();
}

void Method::set_event_tracer(EventTracer* tracer) noexcept {
  state_->tracer.store(tracer, std::memory_order_release);
}
EventTracer* Method::event_tracer() const noexcept { return state_->tracer.load(std::memory_order_acquire); }

Method::Reservation::Reservation(Reservation&& other) noexcept : state_(other.state_) { other.state_ = nullptr; }

Method::Reservation& Method::Reservation::operator=(Reservation&& other) noexcept {
  if (this != &other) {
    Reservation old(std::move(*this));
    state_ = other.state_;
    other.state_ = nullptr;
  }
  return *this;
}

Method::Reservation::~Reservation() {
  // Release: this thread's writes to the method happen before the next holder's reads.
  if (state_ != nullptr) state_->owner.store(std::thread::id(), std::memory_order_release);
}

Result<Method::Reservation> Method::reserve() noexcept {
  MethodState& s = *state_;
  const std::thread::id self = std::this_thread::get_id();
  // Only this thread can have stored its own id, so a relaxed read suffices for nesting.
  if (s.owner.load(std::memory_order_relaxed) == self) return Reservation();
  std::thread::id none;
  if (!s.owner.compare_exchange_strong(none, self, std::memory_order_acquire, std::memory_order_relaxed)) {
    return Error(ErrorCode::InvalidState, "method '" + s.name +
                                              "' is in use by another thread: a method runs one call at a time");
  }
  return Reservation(&s);
}

const Value& Method::output(size_t i) const noexcept {
  static const Value kNone;
  return i < state_->outputs.size() ? state_->values[state_->outputs[i]] : kNone;
}

}  // namespace etrt
