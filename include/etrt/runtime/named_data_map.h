// Named data maps: tensors kept apart from a program and looked up by key when a method loads
// (a program's External tensors). FlatTensorDataMap reads a .ptd file; MergedDataMap serves
// several maps as one.
//
// The .ptd format, for writers: the FlatBuffer of schema/data_map.fbs (file identifier
// kDataMapIdentifier, `version` kDataMapVersion) at offset 0, then a segment area starting at
// `segment_base_offset` (a multiple of kDataMapAlignment). Each NamedTensor's bytes are the
// segment it names, laid out in its dim_order and starting on a kDataMapAlignment boundary of
// the file. `python -m etrt export --external-constants` and etrt.data_map.save write it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "etrt/runtime/config.h"
#include "etrt/runtime/data_loader.h"
#include "etrt/runtime/error.h"
#include "etrt/runtime/span.h"
#include "etrt/runtime/tensor.h"

namespace etrt {

constexpr char kDataMapIdentifier[] = "ETDM";
constexpr uint32_t kDataMapVersion = 1;
constexpr size_t kDataMapAlignment = 64;

// What a data map holds under one key.
struct NamedTensorInfo {
  ScalarType dtype;
  Span<const int64_t> sizes;      // valid as long as the map
  Span<const uint8_t> dim_order;  // outermost first; empty means contiguous
  size_t nbytes;
};

class ETRT_EXPORT NamedDataMap {
 public:
  virtual ~NamedDataMap();
  // NotFound when no tensor has `key`.
  virtual Result<NamedTensorInfo> tensor_info(std::string_view key) const noexcept = 0;
  // The tensor's bytes, aligned to kDataMapAlignment; valid as long as the map.
  virtual Result<Span<const uint8_t>> data(std::string_view key) const noexcept = 0;
  virtual size_t num_keys() const noexcept = 0;
  // Key i, in the map's order; empty past the end.
  virtual std::string_view key(size_t i) const noexcept = 0;
};

class ETRT_EXPORT FlatTensorDataMap final : public NamedDataMap {
 public:
  // Loads and verifies a whole .ptd: every key unique, every size, offset and layout checked.
  // The loader must outlive the map (an mmap loader's memory backs the data).
  static Result<FlatTensorDataMap> load(DataLoader* loader) noexcept;

  FlatTensorDataMap(FlatTensorDataMap&&) noexcept;
  FlatTensorDataMap& operator=(FlatTensorDataMap&&) noexcept;
  ~FlatTensorDataMap() override;

  Result<NamedTensorInfo> tensor_info(std::string_view key) const noexcept override;
  Result<Span<const uint8_t>> data(std::string_view key) const noexcept override;
  size_t num_keys() const noexcept override;
  std::string_view key(size_t i) const noexcept override;

 private:
  struct Impl;
  explicit FlatTensorDataMap(std::unique_ptr<Impl> impl) noexcept;
  std::unique_ptr<Impl> impl_;
};

// Several maps as one; a key may appear in only one of them. The maps must outlive it.
class ETRT_EXPORT MergedDataMap final : public NamedDataMap {
 public:
  // InvalidArgument when two maps share a key (the error names it) or a map is null.
  static Result<MergedDataMap> of(std::vector<const NamedDataMap*> maps) noexcept;

  Result<NamedTensorInfo> tensor_info(std::string_view key) const noexcept override;
  Result<Span<const uint8_t>> data(std::string_view key) const noexcept override;
  size_t num_keys() const noexcept override;
  std::string_view key(size_t i) const noexcept override;

 private:
  explicit MergedDataMap(std::vector<const NamedDataMap*> maps) noexcept : maps_(std::move(maps)) {}
  std::vector<const NamedDataMap*> maps_;
};

}  // namespace etrt
