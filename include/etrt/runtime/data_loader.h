// Where program bytes come from: a file read into memory, an mmap of a file, or memory the
// caller already holds.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "etrt/runtime/config.h"
#include "etrt/runtime/error.h"

namespace etrt {

// A move-only view of loaded bytes. Its free function (if any) runs when it is destroyed.
class ETRT_EXPORT Buffer {
 public:
  using FreeFn = void (*)(void* context, const void* data, size_t size);

  Buffer() noexcept = default;
  Buffer(const void* data, size_t size, FreeFn free_fn = nullptr, void* context = nullptr) noexcept
      : data_(data), size_(size), free_(free_fn), context_(context) {}
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  Buffer(Buffer&& other) noexcept { take(other); }
  Buffer& operator=(Buffer&& other) noexcept {
    if (this != &other) {
      reset();
      take(other);
    }
    return *this;
  }
  ~Buffer() { reset(); }

  const void* data() const noexcept { return data_; }
  const uint8_t* bytes() const noexcept { return static_cast<const uint8_t*>(data_); }
  size_t size() const noexcept { return size_; }
  void reset() noexcept {
    if (free_ != nullptr) free_(context_, data_, size_);
    data_ = nullptr;
    size_ = 0;
    free_ = nullptr;
    context_ = nullptr;
  }

 private:
  void take(Buffer& other) noexcept {
    data_ = other.data_;
    size_ = other.size_;
    free_ = other.free_;
    context_ = other.context_;
    other.data_ = nullptr;
    other.size_ = 0;
    other.free_ = nullptr;
    other.context_ = nullptr;
  }

  const void* data_ = nullptr;
  size_t size_ = 0;
  FreeFn free_ = nullptr;
  void* context_ = nullptr;
};

class ETRT_EXPORT DataLoader {
 public:
  virtual ~DataLoader();
  // Total bytes available.
  virtual Result<size_t> size() const = 0;
  // Bytes [offset, offset + size). The Buffer may point into the loader's own memory, so it
  // must not outlive the loader.
  virtual Result<Buffer> load(size_t offset, size_t size) = 0;
};

// Reads with pread into freshly allocated, 64-byte aligned memory on every load().
class ETRT_EXPORT FileDataLoader final : public DataLoader {
 public:
  static Result<FileDataLoader> from(const std::string& path) noexcept;
  FileDataLoader(FileDataLoader&& other) noexcept;
  FileDataLoader& operator=(FileDataLoader&& other) noexcept;
  FileDataLoader(const FileDataLoader&) = delete;
  FileDataLoader& operator=(const FileDataLoader&) = delete;
  ~FileDataLoader() override;

  Result<size_t> size() const override;
  Result<Buffer> load(size_t offset, size_t size) override;

 private:
  FileDataLoader(int fd, std::string path, size_t size) noexcept;
  int fd_ = -1;
  std::string path_;
  size_t size_ = 0;
};

// Maps the whole file once (private, copy-on-write); load() returns views into the mapping
// (zero copy).
class ETRT_EXPORT MmapDataLoader final : public DataLoader {
 public:
  static Result<MmapDataLoader> from(const std::string& path) noexcept;
  MmapDataLoader(MmapDataLoader&& other) noexcept;
  MmapDataLoader& operator=(MmapDataLoader&& other) noexcept;
  MmapDataLoader(const MmapDataLoader&) = delete;
  MmapDataLoader& operator=(const MmapDataLoader&) = delete;
  ~MmapDataLoader() override;

  Result<size_t> size() const override;
  Result<Buffer> load(size_t offset, size_t size) override;

 private:
  MmapDataLoader(void* map, std::string path, size_t size) noexcept;
  void* map_ = nullptr;
  std::string path_;
  size_t size_ = 0;
};

// Serves views of caller memory (zero copy); the memory must outlive the loader's users.
class ETRT_EXPORT BufferDataLoader final : public DataLoader {
 public:
  BufferDataLoader(const void* data, size_t size) noexcept : data_(data), size_(size) {}
  Result<size_t> size() const override;
  Result<Buffer> load(size_t offset, size_t size) override;

 private:
  const void* data_;
  size_t size_;
};

}  // namespace etrt
