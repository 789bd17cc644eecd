#include "etrt/runtime/data_loader.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace etrt {
namespace {

Error io_error(const std::string& what, const std::string& path, int err) {
  return Error(ErrorCode::IoError, what + " '" + path + "': " + std::strerror(err));
}

Error check_range(size_t offset, size_t size, size_t total, const std::string& name) {
  if (offset > total || size > total - offset) {
    return Error(ErrorCode::InvalidArgument, "load of bytes [" + std::to_string(offset) + ", +" +
                                                 std::to_string(size) + ") is outside the " +
                                                 std::to_string(total) + " bytes of " + name);
  }
  return Error();
}

// Opens a regular file and returns its size.
Result<int> open_file(const std::string& path, size_t* size) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return io_error("cannot open", path, errno);
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    return io_error("cannot stat", path, err);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return Error(ErrorCode::IoError, "'" + path + "' is not a regular file");
  }
  *size = static_cast<size_t>(st.st_size);
  return fd;
}

void free_malloced(void*, const void* data, size_t) { std::free(const_cast<void*>(data)); }

}  // namespace

DataLoader::~DataLoader() = default;

// FileDataLoader ---------------------------------------------------------------------------

FileDataLoader::FileDataLoader(int fd, std::string path, size_t size) noexcept
    : fd_(fd), path_(std::move(path)), size_(size) {}

FileDataLoader::FileDataLoader(FileDataLoader&& other) noexcept
    : fd_(other.fd_), path_(std::move(other.path_)), size_(other.size_) {
  other.fd_ = -1;
}

FileDataLoader& FileDataLoader::operator=(FileDataLoader&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.fd_;
    path_ = std::move(other.path_);
    size_ = other.size_;
    other.fd_ = -1;
  }
  return *this;
}

FileDataLoader::~FileDataLoader() {
  if (fd_ >= 0) ::close(fd_);
}

Result<FileDataLoader> FileDataLoader::from(const std::string& path) noexcept {
  size_t size = 0;
  ETRT_ASSIGN_OR_RETURN(int fd, open_file(path, &size));
  return FileDataLoader(fd, path, size);
}

Result<size_t> FileDataLoader::size() const { return size_; }

Result<Buffer> FileDataLoader::load(size_t offset, size_t size) {
  if (fd_ < 0) return Error(ErrorCode::InvalidState, "file data loader is closed");
  ETRT_RETURN_IF_ERROR(check_range(offset, size, size_, "'" + path_ + "'"));
  void* mem = nullptr;
  if (posix_memalign(&mem, 64, size == 0 ? 64 : (size + 63) / 64 * 64) != 0) {
    return Error(ErrorCode::OutOfMemory, "cannot allocate " + std::to_string(size) + " bytes to read '" + path_ + "'");
  }
  auto* dst = static_cast<uint8_t*>(mem);
  size_t done = 0;
  while (done < size) {
    ssize_t n = ::pread(fd_, dst + done, size - done, static_cast<off_t>(offset + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      std::free(mem);
      return io_error("cannot read", path_, err);
    }
    if (n == 0) {
      std::free(mem);
      return Error(ErrorCode::IoError, "cannot read '" + path_ + "': file shrank while reading");
    }
    done += static_cast<size_t>(n);
  }
  return Buffer(mem, size, free_malloced);
}

// MmapDataLoader ---------------------------------------------------------------------------

MmapDataLoader::MmapDataLoader(void* map, std::string path, size_t size) noexcept
    : map_(map), path_(std::move(path)), size_(size) {}

MmapDataLoader::MmapDataLoader(MmapDataLoader&& other) noexcept
    : map_(other.map_), path_(std::move(other.path_)), size_(other.size_) {
  other.map_ = nullptr;
  other.size_ = 0;
}

MmapDataLoader& MmapDataLoader::operator=(MmapDataLoader&& other) noexcept {
  if (this != &other) {
    if (map_ != nullptr) ::munmap(map_, size_);
    map_ = other.map_;
    path_ = std::move(other.path_);
    size_ = other.size_;
    other.map_ = nullptr;
    other.size_ = 0;
  }
  return *this;
}

MmapDataLoader::~MmapDataLoader() {
  if (map_ != nullptr) ::munmap(map_, size_);
}

Result<MmapDataLoader> MmapDataLoader::from(const std::string& path) noexcept {
  size_t size = 0;
  ETRT_ASSIGN_OR_RETURN(int fd, open_file(path, &size));
  void* map = nullptr;
  if (size > 0) {
    // Private and writable: pages are shared with the page cache until written, so even a
    // malformed program whose kernel writes into a constant cannot fault (or change the file).
    map = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    if (map == MAP_FAILED) {
      int err = errno;
      ::close(fd);
      return io_error("cannot mmap", path, err);
    }
  }
  ::close(fd);  // the mapping stays valid
  return MmapDataLoader(map, path, size);
}

Result<size_t> MmapDataLoader::size() const { return size_; }

Result<Buffer> MmapDataLoader::load(size_t offset, size_t size) {
  ETRT_RETURN_IF_ERROR(check_range(offset, size, size_, "'" + path_ + "'"));
  if (map_ == nullptr) return Buffer();
  return Buffer(static_cast<const uint8_t*>(map_) + offset, size);
}

// BufferDataLoader -------------------------------------------------------------------------

Result<size_t> BufferDataLoader::size() const { return size_; }

Result<Buffer> BufferDataLoader::load(size_t offset, size_t size) {
  ETRT_RETURN_IF_ERROR(check_range(offset, size, size_, "the caller's buffer"));
  if (data_ == nullptr) return Buffer();
  return Buffer(static_cast<const uint8_t*>(data_) + offset, size);
}

}  // namespace etrt
