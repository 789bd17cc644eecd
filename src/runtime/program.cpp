#include "etrt/runtime/program.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unordered_set>
#include <vector>

#include "etrt/runtime/cpu_isa.h"
#include "method_state.h"
#include "program_data.h"

namespace etrt {
namespace detail {
namespace {

std::string str(uint64_t v) { return std::to_string(v); }

bool aligned_to(const void* p, size_t alignment) {
  return reinterpret_cast<uintptr_t>(p) % alignment == 0;
}

// The FlatBuffers verifier checks the alignment of vector lengths (4 bytes) but not of
// 8-byte elements, which are read in place.
template <typename T>
bool vector_aligned(const flatbuffers::Vector<T>* v) {
  return v == nullptr || aligned_to(v->Data(), alignof(T));
}

void free_aligned(void*, const void* data, size_t) { std::free(const_cast<void*>(data)); }

class PlanVerifier {
 public:
  PlanVerifier(const ProgramData& program, const fb::ExecutionPlan& plan, std::string method)
      : program_(program), plan_(plan), where_("method '" + method + "': ") {}

  Error run() {
    if (plan_.arena_size() > kMaxBytes) {
      return fail("arena_size " + str(plan_.arena_size()) + " exceeds the limit of " + str(kMaxBytes) +
                  " bytes");
    }
    num_values_ = plan_.values() ? plan_.values()->size() : 0;
    ETRT_RETURN_IF_ERROR(check_values());
    ETRT_RETURN_IF_ERROR(check_io());
    ETRT_RETURN_IF_ERROR(check_operators());
    ETRT_RETURN_IF_ERROR(check_delegates());
    ETRT_RETURN_IF_ERROR(check_instructions());
    ETRT_RETURN_IF_ERROR(check_outputs_produced());
    return check_arena_used();
  }

 private:
  Error fail(const std::string& what) const { return Error(ErrorCode::InvalidProgram, where_ + what); }

  const fb::Value* value(size_t i) const { return plan_.values()->Get(static_cast<flatbuffers::uoffset_t>(i)); }

  Error check_index(int32_t index, const std::string& what) const {
    if (index < 0 || static_cast<uint64_t>(index) >= num_values_) {
      return fail(what + " refers to value " + std::to_string(index) + ", but the method has " +
                  str(num_values_) + " values");
    }
    return Error();
  }

  Error check_values() {
    for (size_t i = 0; i < num_values_; ++i) {
      const fb::Value* v = value(i);
      std::string what = "value " + str(i);
      if (v == nullptr) return fail(what + " is missing");
      switch (v->val_type()) {
        case fb::ValueUnion::Null:
        case fb::ValueUnion::Int:
        case fb::ValueUnion::Double:
        case fb::ValueUnion::Bool:
        case fb::ValueUnion::String:
        case fb::ValueUnion::BoolList:
          if (v->val() == nullptr) return fail(what + " has no payload");
          break;
        case fb::ValueUnion::IntList:
          if (v->val_as_IntList() == nullptr) return fail(what + " has no payload");
          if (!vector_aligned(v->val_as_IntList()->items())) return fail(what + ": misaligned int list");
          ETRT_RETURN_IF_ERROR(check_int_list(*v->val_as_IntList(), what));
          break;
        case fb::ValueUnion::DoubleList:
          if (v->val_as_DoubleList() == nullptr) return fail(what + " has no payload");
          if (!vector_aligned(v->val_as_DoubleList()->items())) return fail(what + ": misaligned double list");
          break;
        case fb::ValueUnion::Tensor:
          if (v->val_as_Tensor() == nullptr) return fail(what + " has no payload");
          ETRT_RETURN_IF_ERROR(check_tensor(*v->val_as_Tensor(), what));
          break;
        case fb::ValueUnion::TensorList:
          if (v->val_as_TensorList() == nullptr) return fail(what + " has no payload");
          ETRT_RETURN_IF_ERROR(check_list(v->val_as_TensorList()->items(), false, what));
          break;
        case fb::ValueUnion::OptionalTensorList:
          if (v->val_as_OptionalTensorList() == nullptr) return fail(what + " has no payload");
          ETRT_RETURN_IF_ERROR(check_list(v->val_as_OptionalTensorList()->items(), true, what));
          break;
        default:
          return fail(what + " has unknown type " + str(static_cast<uint8_t>(v->val_type())));
      }
    }
    return Error();
  }

  Error check_tensor(const fb::Tensor& t, const std::string& what) {
    if (!vector_aligned(t.sizes())) return fail(what + ": misaligned sizes");
    TensorLayout layout;
    Error err = compute_layout(t, &layout);
    if (!err.ok()) return fail(what + ": " + err.message());
    ETRT_RETURN_IF_ERROR(check_bounds(t, layout, what));
    switch (t.storage()) {
      case fb::StorageKind::State:
        ETRT_RETURN_IF_ERROR(check_state(t, layout, what));
        [[fallthrough]];
      case fb::StorageKind::Planned: {
        uint64_t offset = t.mem_offset();
        uint64_t esize = element_size(static_cast<ScalarType>(t.scalar_type()));
        if (offset > plan_.arena_size() || layout.nbytes > plan_.arena_size() - offset) {
          return fail(what + ": planned bytes [" + str(offset) + ", " + str(offset) + "+" + str(layout.nbytes) +
                      ") lie outside the " + str(plan_.arena_size()) + "-byte arena");
        }
        if (offset % esize != 0) {
          return fail(what + ": mem_offset " + str(offset) + " is not aligned to the element size");
        }
        planned_end_ = std::max(planned_end_, offset + layout.nbytes);
        break;
      }
      case fb::StorageKind::Constant: {
        uint32_t seg = t.constant_segment();
        size_t num_segments = program_.root->segments() ? program_.root->segments()->size() : 0;
        if (seg >= num_segments) {
          return fail(what + ": constant segment " + str(seg) + " does not exist (the program has " +
                      str(num_segments) + ")");
        }
        if (program_.segment_size(seg) < layout.nbytes) {
          return fail(what + ": constant segment " + str(seg) + " holds " + str(program_.segment_size(seg)) +
                      " bytes, the tensor needs " + str(layout.nbytes));
        }
        if (!aligned_to(program_.segment_data(seg), kSegmentAlignment)) {
          return fail(what + ": constant segment " + str(seg) + " is not 64-byte aligned in the file");
        }
        break;
      }
      case fb::StorageKind::Input:
        has_input_storage_ = true;
        break;
      case fb::StorageKind::External:
        if (t.external_key() == nullptr || t.external_key()->size() == 0) {
          return fail(what + ": external tensor without a key");
        }
        break;
      case fb::StorageKind::View:
        break;
      default:
        return fail(what + ": unknown storage kind " + std::to_string(static_cast<int>(t.storage())));
    }
    return Error();
  }

  // Dynamic shapes: only computed tensors and inputs may be dynamic, and only a dynamic input
  // carries bounds, each dimension's in [0, planned size].
  Error check_bounds(const fb::Tensor& t, const TensorLayout& layout, const std::string& what) const {
    const bool has_bounds = t.min_sizes() != nullptr || t.max_sizes() != nullptr;
    if (t.dynamic() && t.storage() != fb::StorageKind::Planned && t.storage() != fb::StorageKind::View &&
        t.storage() != fb::StorageKind::Input) {
      return fail(what + ": only computed tensors and inputs can have a dynamic shape");
    }
    if (!has_bounds) return Error();
    if (!t.dynamic() || t.storage() != fb::StorageKind::Input) {
      return fail(what + ": size bounds on a tensor that is not a dynamic input");
    }
    const auto* lo = t.min_sizes();
    const auto* hi = t.max_sizes();
    const size_t dim = static_cast<size_t>(layout.dim);
    if (lo == nullptr || hi == nullptr || lo->size() != dim || hi->size() != dim) {
      return fail(what + ": size bounds need a min and a max for each of its " + str(dim) + " dimensions");
    }
    if (!vector_aligned(lo) || !vector_aligned(hi)) return fail(what + ": misaligned size bounds");
    for (size_t d = 0; d < dim; ++d) {
      const int64_t min = lo->Get(static_cast<flatbuffers::uoffset_t>(d));
      const int64_t max = hi->Get(static_cast<flatbuffers::uoffset_t>(d));
      const std::string dim_what = what + " dim " + str(d) + ": bounds [" + std::to_string(min) + ", " +
                                   std::to_string(max) + "]";
      if (min < 0) return fail(dim_what + " start below 0");
      if (min > max) return fail(dim_what + " are empty (min > max)");
      if (max > layout.sizes[d]) {
        return fail(dim_what + " exceed the planned size " + std::to_string(layout.sizes[d]));
      }
    }
    return Error();
  }

  // State: its initial value is a whole segment, or zeros.
  Error check_state(const fb::Tensor& t, const TensorLayout& layout, const std::string& what) const {
    if (t.zero_initial()) return Error();
    uint32_t seg = t.constant_segment();
    size_t num_segments = program_.root->segments() ? program_.root->segments()->size() : 0;
    if (seg >= num_segments) {
      return fail(what + ": the initial value's segment " + str(seg) + " does not exist (the program has " +
                  str(num_segments) + ")");
    }
    if (program_.segment_size(seg) != layout.nbytes) {
      return fail(what + ": the initial value's segment " + str(seg) + " holds " + str(program_.segment_size(seg)) +
                  " bytes, the state needs " + str(layout.nbytes));
    }
    return Error();
  }

  // Symbolic items of an int list name Int values.
  Error check_int_list(const fb::IntList& list, const std::string& what) const {
    const auto* symbolic = list.item_values();
    if (symbolic == nullptr || symbolic->size() == 0) return Error();
    const size_t n = list.items() ? list.items()->size() : 0;
    if (symbolic->size() != n) {
      return fail(what + ": int list has " + str(n) + " items but " + str(symbolic->size()) + " item values");
    }
    for (int32_t index : *symbolic) {
      if (index == -1) continue;
      ETRT_RETURN_IF_ERROR(check_index(index, what + " (int list item)"));
      if (value(static_cast<size_t>(index))->val_type() != fb::ValueUnion::Int) {
        return fail(what + ": int list item refers to value " + std::to_string(index) + ", which is not an Int");
      }
    }
    return Error();
  }

  Error check_list(const flatbuffers::Vector<int32_t>* items, bool optional, const std::string& what) {
    if (items == nullptr) return Error();
    for (int32_t item : *items) {
      ETRT_RETURN_IF_ERROR(check_index(item, what + " (list item)"));
      fb::ValueUnion type = value(static_cast<size_t>(item))->val_type();
      if (type != fb::ValueUnion::Tensor && !(optional && type == fb::ValueUnion::Null)) {
        return fail(what + ": list item " + std::to_string(item) + " is not a tensor");
      }
    }
    return Error();
  }

  Error check_io() {
    std::unordered_set<int32_t> inputs;
    if (plan_.inputs() != nullptr) {
      for (int32_t index : *plan_.inputs()) {
        ETRT_RETURN_IF_ERROR(check_index(index, "an input"));
        const fb::Value* v = value(static_cast<size_t>(index));
        switch (v->val_type()) {
          case fb::ValueUnion::Tensor:
            if (v->val_as_Tensor()->storage() != fb::StorageKind::Input) {
              return fail("input value " + std::to_string(index) + " is a tensor without Input storage");
            }
            break;
          case fb::ValueUnion::Int:
          case fb::ValueUnion::Double:
          case fb::ValueUnion::Bool:
            break;
          default:
            return fail("input value " + std::to_string(index) + " is neither a tensor nor a scalar");
        }
        inputs.insert(index);
      }
    }
    if (has_input_storage_) {
      // An Input tensor nobody binds would reach a kernel without memory.
      for (size_t i = 0; i < num_values_; ++i) {
        const fb::Tensor* t = value(i)->val_as_Tensor();
        if (t != nullptr && t->storage() == fb::StorageKind::Input && inputs.count(static_cast<int32_t>(i)) == 0) {
          return fail("value " + str(i) + " has Input storage but is not a method input");
        }
      }
    }
    if (plan_.outputs() != nullptr) {
      for (int32_t index : *plan_.outputs()) ETRT_RETURN_IF_ERROR(check_index(index, "an output"));
    }
    return Error();
  }

  Error check_operators() {
    if (plan_.operators() == nullptr) return Error();
    for (flatbuffers::uoffset_t i = 0; i < plan_.operators()->size(); ++i) {
      const fb::Operator* op = plan_.operators()->Get(i);
      if (op == nullptr || op->name() == nullptr || op->name()->size() == 0) {
        return fail("operator " + str(i) + " has no name");
      }
    }
    return Error();
  }

  Error check_delegates() {
    if (plan_.delegates() == nullptr) return Error();
    size_t num_segments = program_.root->segments() ? program_.root->segments()->size() : 0;
    for (flatbuffers::uoffset_t i = 0; i < plan_.delegates()->size(); ++i) {
      const fb::BackendDelegate* d = plan_.delegates()->Get(i);
      if (d == nullptr || d->id() == nullptr || d->id()->size() == 0) return fail("delegate " + str(i) + " has no id");
      if (d->segment() >= num_segments) {
        return fail("delegate " + str(i) + " refers to segment " + str(d->segment()) + ", but the program has " +
                    str(num_segments));
      }
      if (d->compile_specs() != nullptr) {
        for (const fb::CompileSpec* spec : *d->compile_specs()) {
          if (spec == nullptr || spec->key() == nullptr) return fail("delegate " + str(i) + " has a compile spec without key");
        }
      }
    }
    return Error();
  }

  Error check_instructions() {
    if (plan_.instructions() == nullptr) return Error();
    size_t num_ops = plan_.operators() ? plan_.operators()->size() : 0;
    size_t num_delegates = plan_.delegates() ? plan_.delegates()->size() : 0;
    for (flatbuffers::uoffset_t i = 0; i < plan_.instructions()->size(); ++i) {
      const fb::Instruction* instr = plan_.instructions()->Get(i);
      std::string what = "instruction " + str(i);
      if (instr == nullptr) return fail(what + " is missing");
      const flatbuffers::Vector<int32_t>* args = nullptr;
      if (const fb::KernelCall* call = instr->call_as_KernelCall()) {
        if (call->op_index() >= num_ops) {
          return fail(what + " calls operator " + str(call->op_index()) + ", but the method has " + str(num_ops));
        }
        args = call->args();
      } else if (const fb::DelegateCall* dcall = instr->call_as_DelegateCall()) {
        if (dcall->delegate_index() >= num_delegates) {
          return fail(what + " calls delegate " + str(dcall->delegate_index()) + ", but the method has " +
                      str(num_delegates));
        }
        args = dcall->args();
      } else {
        return fail(what + " is neither a kernel call nor a delegate call");
      }
      if (args != nullptr) {
        for (int32_t a : *args) {
          ETRT_RETURN_IF_ERROR(check_index(a, what + " argument"));
          used_.insert(a);
          for (int32_t item : list_items(a)) used_.insert(item);
        }
        // Outputs come last and every call has one: the last argument is written.
        if (args->size() > 0) ETRT_RETURN_IF_ERROR(check_writable(args->Get(args->size() - 1), what));
      }
    }
    return Error();
  }

  // Items of a tensor list value (checked by check_values), none for anything else.
  std::vector<int32_t> list_items(int32_t index) const {
    const fb::Value* v = value(static_cast<size_t>(index));
    const flatbuffers::Vector<int32_t>* items = nullptr;
    if (const auto* l = v->val_as_TensorList()) items = l->items();
    if (const auto* l = v->val_as_OptionalTensorList()) items = l->items();
    return items ? std::vector<int32_t>(items->begin(), items->end()) : std::vector<int32_t>();
  }

  bool read_only(int32_t index) const {
    const fb::Tensor* t = value(static_cast<size_t>(index))->val_as_Tensor();
    return t != nullptr && (t->storage() == fb::StorageKind::Constant || t->storage() == fb::StorageKind::External);
  }

  Error check_writable(int32_t out, const std::string& what) const {
    std::vector<int32_t> targets = list_items(out);
    targets.push_back(out);
    for (int32_t t : targets) {
      if (read_only(t)) return fail(what + " writes its output into value " + std::to_string(t) + ", a read-only constant");
    }
    return Error();
  }

  // A method output nothing writes would hand the caller no memory (a view) or bytes no
  // instruction produced (planned memory). A planned or view value is produced where it first
  // appears (the program is in execution order; outputs follow inputs in every call), as the
  // runtime resets it there. Every such output is named at once.
  Error check_outputs_produced() const {
    if (plan_.outputs() == nullptr) return Error();
    std::string unwritten;
    for (flatbuffers::uoffset_t i = 0; i < plan_.outputs()->size(); ++i) {
      const int32_t index = plan_.outputs()->Get(i);
      const fb::Tensor* t = value(static_cast<size_t>(index))->val_as_Tensor();
      if (t == nullptr || used_.count(index) != 0) continue;
      if (t->storage() == fb::StorageKind::View || t->storage() == fb::StorageKind::Planned) {
        unwritten += (unwritten.empty() ? "" : ", ") + std::string("output ") + str(i) + " (value " +
                     std::to_string(index) + ")";
      }
    }
    if (unwritten.empty()) return Error();
    return fail(unwritten + ": never written by an instruction, so there is no data to return");
  }

  // The arena is allocated whole when the method loads: at most a page beyond what its
  // planned tensors reach, so a size field alone cannot commit memory.
  Error check_arena_used() const {
    if (plan_.arena_size() - planned_end_ > kArenaSlack) {  // planned_end_ <= arena_size: checked per tensor
      return fail("arena_size " + str(plan_.arena_size()) + " is larger than its planned tensors need (" +
                  str(planned_end_) + " bytes)");
    }
    return Error();
  }

  static constexpr uint64_t kArenaSlack = 4096;

  const ProgramData& program_;
  const fb::ExecutionPlan& plan_;
  std::string where_;
  uint64_t planned_end_ = 0;  // one past the last byte any planned tensor uses
  size_t num_values_ = 0;
  bool has_input_storage_ = false;
  std::unordered_set<int32_t> used_;  // values some instruction takes as an argument (or a list item of one)
};

Error check_segments(const ProgramData& data) {
  const fb::Program& root = *data.root;
  uint64_t file_size = data.bytes.size();
  uint64_t base = root.segment_base_offset();
  if (base % kSegmentAlignment != 0) {
    return Error(ErrorCode::InvalidProgram, "segment_base_offset " + str(base) + " is not a multiple of 64");
  }
  if (root.segments() == nullptr) return Error();
  if (!vector_aligned(root.segments())) return Error(ErrorCode::InvalidProgram, "misaligned segment table");
  if (base > file_size) {
    return Error(ErrorCode::InvalidProgram,
                 "segment_base_offset " + str(base) + " lies past the end of the " + str(file_size) + "-byte file");
  }
  for (flatbuffers::uoffset_t i = 0; i < root.segments()->size(); ++i) {
    const fb::DataSegment* seg = root.segments()->Get(i);
    uint64_t room = file_size - base;
    if (seg->offset() > room || seg->size() > room - seg->offset()) {
      return Error(ErrorCode::InvalidProgram, "segment " + str(i) + " (offset " + str(seg->offset()) + ", size " +
                                                  str(seg->size()) + ") extends past the end of the " +
                                                  str(file_size) + "-byte file");
    }
  }
  return Error();
}

// Reads just the version field, so a newer file whose layout differs still gets a clear
// UnsupportedVersion instead of a generic verifier failure.
bool peek_version(const uint8_t* buf, size_t size, uint32_t* version) {
  flatbuffers::Verifier verifier(buf, size);
  if (!verifier.VerifyAlignment(0, sizeof(flatbuffers::uoffset_t)) ||
      !verifier.Verify<flatbuffers::uoffset_t>(0)) {
    return false;
  }
  auto root_offset = flatbuffers::ReadScalar<flatbuffers::uoffset_t>(buf);
  if (root_offset == 0 || root_offset >= size) return false;
  // fb::Program derives privately from Table; view the same bytes as a Table.
  const auto* table = reinterpret_cast<const flatbuffers::Table*>(buf + root_offset);
  if (!table->VerifyTableStart(verifier) ||
      !table->VerifyField<uint32_t>(verifier, fb::Program::VT_VERSION, 4)) {
    return false;
  }
  *version = table->GetField<uint32_t>(fb::Program::VT_VERSION, 0);
  return true;
}

}  // namespace

Error compute_layout(const fb::Tensor& t, TensorLayout* out) {
  auto dtype = static_cast<ScalarType>(t.scalar_type());
  if (!is_valid(dtype)) return Error(ErrorCode::InvalidProgram, "unknown scalar type " + std::to_string(static_cast<int>(dtype)));
  size_t dim = t.sizes() ? t.sizes()->size() : 0;
  if (dim > static_cast<size_t>(Tensor::kMaxDims)) {
    return Error(ErrorCode::InvalidProgram, "tensor has " + str(dim) + " dimensions, at most " +
                                                std::to_string(Tensor::kMaxDims) + " are supported");
  }
  out->dim = static_cast<int>(dim);
  for (size_t d = 0; d < dim; ++d) {
    int64_t s = t.sizes()->Get(static_cast<flatbuffers::uoffset_t>(d));
    if (s < 0) return Error(ErrorCode::InvalidProgram, "negative size " + std::to_string(s) + " in dimension " + str(d));
    out->sizes[d] = s;
  }
  int64_t numel = 0;
  if (!checked::numel(out->sizes, dim, &numel)) {
    return Error(ErrorCode::InvalidProgram, "tensor has too many elements (more than " + str(checked::kMaxElements) +
                                                " in its non-empty dimensions)");
  }
  if (!checked::nbytes(numel, element_size(dtype), &out->nbytes)) {
    return Error(ErrorCode::InvalidProgram, "tensor needs more than " + str(kMaxBytes) + " bytes");
  }

  // dim_order lists dimensions outermost first; absent means contiguous.
  int order[Tensor::kMaxDims];
  if (t.dim_order() == nullptr || t.dim_order()->size() == 0) {
    for (size_t d = 0; d < dim; ++d) order[d] = static_cast<int>(d);
  } else {
    if (t.dim_order()->size() != dim) {
      return Error(ErrorCode::InvalidProgram, "dim_order has " + str(t.dim_order()->size()) + " entries for " +
                                                  str(dim) + " dimensions");
    }
    bool seen[Tensor::kMaxDims] = {};
    for (size_t k = 0; k < dim; ++k) {
      uint8_t d = t.dim_order()->Get(static_cast<flatbuffers::uoffset_t>(k));
      if (d >= dim || seen[d]) return Error(ErrorCode::InvalidProgram, "dim_order is not a permutation");
      seen[d] = true;
      order[k] = d;
    }
  }
  int64_t stride = 1;
  for (size_t k = dim; k-- > 0;) {
    out->strides[order[k]] = stride;
    stride *= std::max<int64_t>(out->sizes[order[k]], 1);  // bounded: numel checked above
  }
  return Error();
}

}  // namespace detail

Program::Program(std::shared_ptr<const detail::ProgramData> data) noexcept : data_(std::move(data)) {}
Program::Program(Program&&) noexcept = default;
Program& Program::operator=(Program&&) noexcept = default;
Program::~Program() = default;

Result<Program> Program::load(DataLoader* loader) noexcept {
  using detail::str;
  if (loader == nullptr) return Error(ErrorCode::InvalidArgument, "Program::load got no data loader");
  try {
    ETRT_ASSIGN_OR_RETURN(size_t size, loader->size());
    constexpr size_t kHeader = sizeof(flatbuffers::uoffset_t) + flatbuffers::kFileIdentifierLength;
    if (size < kHeader) {
      return Error(ErrorCode::InvalidProgram, "file is " + str(size) + " bytes, too short for a program");
    }
    ETRT_ASSIGN_OR_RETURN(Buffer bytes, loader->load(0, size));
    if (bytes.size() != size) return Error(ErrorCode::IoError, "data loader returned a short buffer");
    if (!detail::aligned_to(bytes.data(), detail::kSegmentAlignment)) {
      // Constants and the FlatBuffer itself are read in place, so they need an aligned base.
      void* copy = std::aligned_alloc(detail::kSegmentAlignment, (size + 63) / 64 * 64);
      if (copy == nullptr) return Error(ErrorCode::OutOfMemory, "cannot copy the program to aligned memory");
      std::memcpy(copy, bytes.data(), size);
      bytes = Buffer(copy, size, detail::free_aligned);
    }
    const uint8_t* buf = bytes.bytes();
    if (!flatbuffers::BufferHasIdentifier(buf, fb::ProgramIdentifier())) {
      return Error(ErrorCode::InvalidProgram, std::string("bad magic: expected file identifier '") +
                                                  fb::ProgramIdentifier() + "' at byte 4");
    }
    // The FlatBuffer sits at the start; segments after it are checked separately.
    size_t fb_size = std::min<size_t>(size, FLATBUFFERS_MAX_BUFFER_SIZE - 1);
    uint32_t version = 0;
    if (!detail::peek_version(buf, fb_size, &version)) {
      return Error(ErrorCode::InvalidProgram, "malformed program header (root table unreadable)");
    }
    if (version < kMinVersion || version > kVersion) {
      return Error(ErrorCode::UnsupportedVersion, "program version " + str(version) + ", but this runtime reads versions " +
                                                      str(kMinVersion) + " to " + str(kVersion));
    }
    flatbuffers::Verifier::Options options;
    options.max_depth = 16;  // the schema nests at most 5 deep
    options.max_tables = 4000000;
    flatbuffers::Verifier verifier(buf, fb_size, options);
    if (!fb::VerifyProgramBuffer(verifier)) {
      return Error(ErrorCode::InvalidProgram, "program failed FlatBuffers verification (corrupt or truncated)");
    }

    auto data = std::make_shared<detail::ProgramData>();
    data->root = fb::GetProgram(buf);
    data->bytes = std::move(bytes);
    ETRT_RETURN_IF_ERROR(detail::check_segments(*data));

    const auto* plans = data->root->execution_plans();
    if (plans == nullptr || plans->size() == 0) return Error(ErrorCode::InvalidProgram, "program has no methods");
    for (flatbuffers::uoffset_t i = 0; i < plans->size(); ++i) {
      const fb::ExecutionPlan* plan = plans->Get(i);
      if (plan == nullptr || plan->name() == nullptr || plan->name()->size() == 0) {
        return Error(ErrorCode::InvalidProgram, "method " + str(i) + " has no name");
      }
      std::string name = plan->name()->str();
      if (std::find(data->method_names.begin(), data->method_names.end(), name) != data->method_names.end()) {
        return Error(ErrorCode::InvalidProgram, "method '" + detail::printable(name) + "' is defined twice");
      }
      ETRT_RETURN_IF_ERROR(detail::PlanVerifier(*data, *plan, detail::printable(name)).run());
      data->method_names.push_back(std::move(name));
    }
    return Program(std::move(data));
  } catch (const std::bad_alloc&) {
    return Error(ErrorCode::OutOfMemory, "out of memory while loading the program");
  }
}

uint32_t Program::version() const noexcept { return data_->root->version(); }

size_t Program::num_methods() const noexcept { return data_->method_names.size(); }

std::string_view Program::method_name(size_t i) const noexcept {
  return i < data_->method_names.size() ? std::string_view(data_->method_names[i]) : std::string_view();
}

std::vector<std::string> Program::method_names() const { return data_->method_names; }

namespace detail {
namespace {

// ETRT_MAX_MEMORY_BYTES parsed: 0 with a message for anything but digits and one unit.
uint64_t parse_byte_count(const std::string& text) {
  uint64_t n = 0;
  size_t i = 0;
  for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) {
    if (!checked::mul(n, uint64_t{10}, &n) || !checked::add(n, static_cast<uint64_t>(text[i] - '0'), &n)) return 0;
  }
  if (i == 0 || i + 1 < text.size()) return 0;
  if (i < text.size()) {
    const size_t unit = std::string("KMGT").find(static_cast<char>(std::toupper(static_cast<unsigned char>(text[i]))));
    if (unit == std::string::npos) return 0;
    for (size_t k = 0; k <= unit; ++k) {
      if (!checked::mul(n, uint64_t{1024}, &n)) return 0;
    }
  }
  return n;
}

}  // namespace
}  // namespace detail

Result<uint64_t> default_max_memory_bytes() noexcept {
  // Read once: the environment of a running process is not a setting to change under it.
  static const std::string env = [] {
    const char* v = std::getenv("ETRT_MAX_MEMORY_BYTES");
    return std::string(v ? v : "");
  }();
  if (env.empty()) return kDefaultMaxMemoryBytes;
  const uint64_t n = detail::parse_byte_count(env);
  if (n == 0) {
    return Error(ErrorCode::InvalidArgument, "ETRT_MAX_MEMORY_BYTES='" + detail::printable(env) +
                                                 "' is not a byte count (digits, then optionally K, M, G or T)");
  }
  return n;
}

Result<Method> Program::load_method(std::string_view name, MemoryAllocator* allocator,
                                    const NamedDataMap* data_map, const LoadOptions& options) const noexcept {
  const auto& names = data_->method_names;
  auto it = std::find(names.begin(), names.end(), name);
  if (it == names.end()) {
    std::string known;
    for (const std::string& n : names) known += (known.empty() ? "" : ", ") + detail::printable(n);
    return Error(ErrorCode::NotFound, "no method '" + detail::printable(name) + "' in the program (methods: " + known + ")");
  }
  const fb::ExecutionPlan* plan =
      data_->root->execution_plans()->Get(static_cast<flatbuffers::uoffset_t>(it - names.begin()));
  // A mistyped ETRT_MAX_ISA fails here, before anything runs, rather than being ignored.
  {
    const Result<CpuIsa> cap = max_isa();
    if (!cap.ok()) return cap.error();
  }
  uint64_t budget = options.max_memory_bytes;
  if (budget == 0) {
    ETRT_ASSIGN_OR_RETURN(budget, default_max_memory_bytes());
  }
  ETRT_ASSIGN_OR_RETURN(std::unique_ptr<detail::MethodState> state,
                        detail::MethodState::create(data_, *plan, allocator, data_map, budget));
  return Method(std::move(state));
}

}  // namespace etrt
