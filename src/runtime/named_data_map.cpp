#include "etrt/runtime/named_data_map.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unordered_map>
#include <utility>

#include "etrt/fb/data_map_generated.h"
#include "program_data.h"

namespace etrt {

NamedDataMap::~NamedDataMap() = default;

namespace {

using detail::printable;

std::string str(uint64_t v) { return std::to_string(v); }

Error bad(const std::string& what) { return Error(ErrorCode::InvalidProgram, "data map: " + what); }

void free_aligned(void*, const void* data, size_t) { std::free(const_cast<void*>(data)); }

}  // namespace

struct FlatTensorDataMap::Impl {
  struct Entry {
    std::string key;
    NamedTensorInfo info;
    int64_t sizes[Tensor::kMaxDims] = {};
    uint8_t dim_order[Tensor::kMaxDims] = {};
    const uint8_t* data = nullptr;
  };
  Buffer bytes;
  std::vector<Entry> entries;
  std::unordered_map<std::string_view, size_t> index;  // keys point into `entries`

  const Entry* find(std::string_view key) const {
    auto it = index.find(key);
    return it == index.end() ? nullptr : &entries[it->second];
  }
};

Result<FlatTensorDataMap> FlatTensorDataMap::load(DataLoader* loader) noexcept {
  if (loader == nullptr) return Error(ErrorCode::InvalidArgument, "FlatTensorDataMap::load got no data loader");
  try {
    ETRT_ASSIGN_OR_RETURN(size_t size, loader->size());
    constexpr size_t kHeader = sizeof(flatbuffers::uoffset_t) + flatbuffers::kFileIdentifierLength;
    if (size < kHeader) return bad("file is " + str(size) + " bytes, too short for a data map");
    ETRT_ASSIGN_OR_RETURN(Buffer bytes, loader->load(0, size));
    if (bytes.size() != size) return Error(ErrorCode::IoError, "data loader returned a short buffer");
    if (reinterpret_cast<uintptr_t>(bytes.data()) % kDataMapAlignment != 0) {
      void* copy = std::aligned_alloc(kDataMapAlignment, (size + kDataMapAlignment - 1) / kDataMapAlignment * kDataMapAlignment);
      if (copy == nullptr) return Error(ErrorCode::OutOfMemory, "cannot copy the data map to aligned memory");
      std::memcpy(copy, bytes.data(), size);
      bytes = Buffer(copy, size, free_aligned);
    }
    const uint8_t* buf = bytes.bytes();
    if (!flatbuffers::BufferHasIdentifier(buf, fb::DataMapIdentifier())) {
      return bad(std::string("bad magic: expected file identifier '") + fb::DataMapIdentifier() + "' at byte 4");
    }
    const size_t fb_size = std::min<size_t>(size, FLATBUFFERS_MAX_BUFFER_SIZE - 1);
    flatbuffers::Verifier::Options options;
    options.max_depth = 8;
    options.max_tables = 4000000;
    flatbuffers::Verifier verifier(buf, fb_size, options);
    if (!fb::VerifyDataMapBuffer(verifier)) return bad("failed FlatBuffers verification (corrupt or truncated)");
    const fb::DataMap* root = fb::GetDataMap(buf);
    if (root->version() != kDataMapVersion) {
      return Error(ErrorCode::UnsupportedVersion, "data map version " + str(root->version()) +
                                                      ", but this runtime reads version " + str(kDataMapVersion));
    }
    const uint64_t base = root->segment_base_offset();
    if (base % kDataMapAlignment != 0 || base > size) {
      return bad("segment_base_offset " + str(base) + " is not a multiple of 64 inside the " + str(size) + "-byte file");
    }
    const auto* segments = root->segments();
    const size_t num_segments = segments ? segments->size() : 0;
    if (segments != nullptr && reinterpret_cast<uintptr_t>(segments->Data()) % alignof(uint64_t) != 0) {
      return bad("misaligned segment table");
    }
    auto impl = std::make_unique<Impl>();
    const auto* tensors = root->tensors();
    const size_t count = tensors ? tensors->size() : 0;
    impl->entries.resize(count);
    for (size_t i = 0; i < count; ++i) {
      const fb::NamedTensor* t = tensors->Get(static_cast<flatbuffers::uoffset_t>(i));
      const std::string what = "tensor " + str(i);
      if (t == nullptr || t->key() == nullptr || t->key()->size() == 0) return bad(what + " has no key");
      Impl::Entry& e = impl->entries[i];
      e.key = t->key()->str();
      const std::string named = what + " ('" + printable(e.key) + "')";
      const auto dtype = static_cast<ScalarType>(t->scalar_type());
      if (!is_valid(dtype)) return bad(named + " has unknown scalar type " + std::to_string(t->scalar_type()));
      const size_t dim = t->sizes() ? t->sizes()->size() : 0;
      if (dim > static_cast<size_t>(Tensor::kMaxDims)) return bad(named + " has " + str(dim) + " dimensions");
      if (t->sizes() != nullptr && reinterpret_cast<uintptr_t>(t->sizes()->Data()) % alignof(int64_t) != 0) {
        return bad(named + ": misaligned sizes");
      }
      for (size_t d = 0; d < dim; ++d) {
        const int64_t s = t->sizes()->Get(static_cast<flatbuffers::uoffset_t>(d));
        if (s < 0) return bad(named + " has a negative size");
        e.sizes[d] = s;
      }
      int64_t numel = 0;
      uint64_t nbytes = 0;
      if (!checked::numel(e.sizes, dim, &numel) || !checked::nbytes(numel, element_size(dtype), &nbytes)) {
        return bad(named + " is too large (at most " + str(checked::kMaxElements) + " elements and " +
                   str(checked::kMaxBytes) + " bytes)");
      }
      const size_t order_len = t->dim_order() ? t->dim_order()->size() : 0;
      if (order_len != 0) {
        bool seen[Tensor::kMaxDims] = {};
        bool ok = order_len == dim;
        for (size_t k = 0; ok && k < order_len; ++k) {
          const uint8_t d = t->dim_order()->Get(static_cast<flatbuffers::uoffset_t>(k));
          ok = d < dim && !seen[d];
          if (ok) seen[d] = true;
          e.dim_order[k] = d;
        }
        if (!ok) return bad(named + ": dim_order is not a permutation of its " + str(dim) + " dimensions");
      }
      if (t->segment() >= num_segments) {
        return bad(named + " refers to segment " + str(t->segment()) + ", but the file has " + str(num_segments));
      }
      const fb::TensorSegment* seg = segments->Get(t->segment());
      const uint64_t room = size - base;
      if (seg->offset() > room || seg->size() > room - seg->offset() || seg->size() < nbytes) {
        return bad(named + ": segment " + str(t->segment()) + " (offset " + str(seg->offset()) + ", size " +
                   str(seg->size()) + ") does not hold its " + str(nbytes) + " bytes inside the file");
      }
      if ((base + seg->offset()) % kDataMapAlignment != 0) {
        return bad(named + ": segment " + str(t->segment()) + " is not 64-byte aligned in the file");
      }
      e.data = buf + base + seg->offset();
      e.info = NamedTensorInfo{dtype, Span<const int64_t>(e.sizes, dim), Span<const uint8_t>(e.dim_order, order_len),
                               static_cast<size_t>(nbytes)};
    }
    for (size_t i = 0; i < count; ++i) {
      if (!impl->index.emplace(impl->entries[i].key, i).second) {
        return bad("key '" + printable(impl->entries[i].key) + "' appears twice");
      }
    }
    impl->bytes = std::move(bytes);
    return FlatTensorDataMap(std::move(impl));
  } catch (const std::bad_alloc&) {
    return Error(ErrorCode::OutOfMemory, "out of memory while loading the data map");
  }
}

FlatTensorDataMap::FlatTensorDataMap(std::unique_ptr<Impl> impl) noexcept : impl_(std::move(impl)) {}
FlatTensorDataMap::FlatTensorDataMap(FlatTensorDataMap&&) noexcept = default;
FlatTensorDataMap& FlatTensorDataMap::operator=(FlatTensorDataMap&&) noexcept = default;
FlatTensorDataMap::~FlatTensorDataMap() = default;

Result<NamedTensorInfo> FlatTensorDataMap::tensor_info(std::string_view key) const noexcept {
  const Impl::Entry* e = impl_->find(key);
  if (e == nullptr) return Error(ErrorCode::NotFound, "no tensor '" + printable(key) + "' in the data map");
  return e->info;
}

Result<Span<const uint8_t>> FlatTensorDataMap::data(std::string_view key) const noexcept {
  const Impl::Entry* e = impl_->find(key);
  if (e == nullptr) return Error(ErrorCode::NotFound, "no tensor '" + printable(key) + "' in the data map");
  return Span<const uint8_t>(e->data, e->info.nbytes);
}

size_t FlatTensorDataMap::num_keys() const noexcept { return impl_->entries.size(); }

std::string_view FlatTensorDataMap::key(size_t i) const noexcept {
  return i < impl_->entries.size() ? std::string_view(impl_->entries[i].key) : std::string_view();
}

Result<MergedDataMap> MergedDataMap::of(std::vector<const NamedDataMap*> maps) noexcept {
  try {
    std::unordered_map<std::string_view, size_t> seen;
    for (size_t m = 0; m < maps.size(); ++m) {
      if (maps[m] == nullptr) return Error(ErrorCode::InvalidArgument, "MergedDataMap: map " + str(m) + " is null");
      for (size_t i = 0; i < maps[m]->num_keys(); ++i) {
        auto [it, fresh] = seen.emplace(maps[m]->key(i), m);
        if (!fresh) {
          return Error(ErrorCode::InvalidArgument, "MergedDataMap: key '" + printable(it->first) +
                                                       "' is in map " + str(it->second) + " and map " + str(m));
        }
      }
    }
    return MergedDataMap(std::move(maps));
  } catch (const std::bad_alloc&) {
    return Error(ErrorCode::OutOfMemory, "out of memory while merging data maps");
  }
}

// The first map holding `key` answers; keys are unique across the maps (checked in of()).
Result<NamedTensorInfo> MergedDataMap::tensor_info(std::string_view key) const noexcept {
  for (const NamedDataMap* m : maps_) {
    auto info = m->tensor_info(key);
    if (info.ok()) return info;
  }
  return Error(ErrorCode::NotFound, "no tensor '" + printable(key) + "' in the data maps");
}

Result<Span<const uint8_t>> MergedDataMap::data(std::string_view key) const noexcept {
  for (const NamedDataMap* m : maps_) {
    auto bytes = m->data(key);
    if (bytes.ok()) return bytes;
  }
  return Error(ErrorCode::NotFound, "no tensor '" + printable(key) + "' in the data maps");
}

size_t MergedDataMap::num_keys() const noexcept {
  size_t n = 0;
  for (const NamedDataMap* m : maps_) n += m->num_keys();
  return n;
}

std::string_view MergedDataMap::key(size_t i) const noexcept {
  for (const NamedDataMap* m : maps_) {
    if (i < m->num_keys()) return m->key(i);
    i -= m->num_keys();
  }
  return std::string_view();
}

}  // namespace etrt
