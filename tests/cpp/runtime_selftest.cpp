// Unit checks of libetrt.so that need no program file: registries, tensors, values,
// parallel_for, loaders, allocators. Prints one line per failed check and a summary line
// "N passed, N failed"; exits non-zero on any failure.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "etrt/runtime/runtime.h"

namespace {

int g_passed = 0;
int g_failed = 0;

void check(bool ok, const char* what, const std::string& detail = "") {
  if (ok) {
    ++g_passed;
  } else {
    ++g_failed;
    std::printf("FAILED: %s %s\n", what, detail.c_str());
  }
}

bool contains(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }

void noop_kernel(etrt::KernelContext&, etrt::Span<etrt::Value*>) {}
void other_kernel(etrt::KernelContext&, etrt::Span<etrt::Value*>) {}

void test_kernel_registry() {
  size_t before = etrt::num_registered_kernels();
  etrt::Error first = etrt::register_kernel({"selftest::op", noop_kernel});
  check(first.ok(), "first registration succeeds", first.to_string());
  etrt::Error second = etrt::register_kernel({"selftest::op", other_kernel});
  check(second.code() == etrt::ErrorCode::AlreadyRegistered, "registering twice fails with AlreadyRegistered",
        second.to_string());
  check(contains(second.message(), "selftest::op"), "the error names the operator", second.message());
  check(etrt::find_kernel("selftest::op") == noop_kernel, "the first kernel stays registered");

  // All or nothing: a batch with one conflict registers none of its kernels.
  const etrt::Kernel batch[] = {{"selftest::fresh", noop_kernel}, {"selftest::op", noop_kernel}};
  etrt::Error batch_err = etrt::register_kernels(batch);
  check(batch_err.code() == etrt::ErrorCode::AlreadyRegistered, "batch with a conflict fails");
  check(etrt::find_kernel("selftest::fresh") == nullptr, "batch with a conflict registers nothing");
  const etrt::Kernel dup[] = {{"selftest::dup", noop_kernel}, {"selftest::dup", noop_kernel}};
  check(etrt::register_kernels(dup).code() == etrt::ErrorCode::AlreadyRegistered, "duplicate inside a batch fails");
  check(etrt::register_kernel({"selftest::null", nullptr}).code() == etrt::ErrorCode::InvalidArgument,
        "a null kernel is rejected");
  check(etrt::num_registered_kernels() == before + 1, "count grows by the one success");
  check(std::string(etrt::registered_kernel_name(before)) == "selftest::op", "names are in registration order");
  check(etrt::registered_kernel_name(before + 1) == nullptr, "name past the end is null");
}

class FakeBackend final : public etrt::BackendInterface {
 public:
  bool is_available() const override { return true; }
  etrt::Result<void*> init(etrt::Span<const uint8_t>, etrt::Span<const etrt::CompileSpec>,
                           etrt::BackendInitContext&) override {
    return static_cast<void*>(this);
  }
  etrt::Error execute(void*, etrt::Span<etrt::Value*>) override { return etrt::Error(); }
  void destroy(void*) noexcept override {}
};

void test_backend_registry() {
  static FakeBackend backend;
  check(etrt::register_backend("SelftestBackend", &backend).ok(), "backend registers");
  etrt::Error again = etrt::register_backend("SelftestBackend", &backend);
  check(again.code() == etrt::ErrorCode::AlreadyRegistered && contains(again.message(), "SelftestBackend"),
        "registering a backend twice names it", again.to_string());
  check(etrt::find_backend("SelftestBackend") == &backend, "find_backend finds it");
  check(etrt::find_backend("Nope") == nullptr, "unknown backend is null");
}

void test_tensor_and_value() {
  float data[6] = {};
  auto t = etrt::Tensor::make(data, etrt::ScalarType::Float, {std::initializer_list<int64_t>{2, 3}.begin(), 2});
  check(t.ok() && t->numel() == 6 && t->nbytes() == 24 && t->is_contiguous() && t->stride(0) == 3,
        "contiguous tensor");
  int64_t nine[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
  check(!etrt::Tensor::make(data, etrt::ScalarType::Float, nine).ok(), "nine dimensions rejected");
  int64_t neg[1] = {-1};
  check(!etrt::Tensor::make(data, etrt::ScalarType::Float, neg).ok(), "negative size rejected");
  check(!etrt::is_valid(static_cast<etrt::ScalarType>(42)), "unknown dtype is invalid");
  int64_t sizes[2] = {3, 2}, strides[2] = {1, 3};
  auto tt = etrt::Tensor::make(data, etrt::ScalarType::Float, sizes, strides);
  check(tt.ok() && !tt->is_contiguous(), "transposed tensor is not contiguous");

  etrt::Value v(int64_t{7});
  check(v.is_int() && v.scalar_to_double() == 7.0, "int value");
  etrt::Value d(2.5);
  check(d.is_double() && d.scalar_to_int() == 2, "double value");
  etrt::Value tv(*t);
  check(tv.is_tensor() && tv.to_tensor().data() == data, "tensor value");
  check(std::string(etrt::to_string(etrt::Tag::TensorList)) == "TensorList", "tag names");
  check(etrt::Error(etrt::ErrorCode::InvalidProgram, "bad magic").to_string() == "InvalidProgram: bad magic",
        "error text");
}

int g_backend_calls = 0;
void fake_parallel_for(int64_t begin, int64_t end, int64_t, etrt::RangeFn fn) {
  ++g_backend_calls;
  int64_t mid = begin + (end - begin) / 2;
  fn(begin, mid);
  fn(mid, end);
}
int fake_threads() { return 4; }

void test_parallel() {
  int64_t sum = 0;
  etrt::parallel_for(0, 100, 1, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) sum += i;
  });
  check(sum == 4950 && etrt::parallel_num_threads() == 1, "serial parallel_for");
  check(etrt::set_parallel_num_threads(1).ok(), "one thread is fine without a pool");
  check(etrt::set_parallel_num_threads(2).code() == etrt::ErrorCode::InvalidState,
        "more threads without a pool is InvalidState");
  static const etrt::ParallelBackend backend{fake_parallel_for, fake_threads, nullptr};
  etrt::set_parallel_backend(&backend);
  sum = 0;
  etrt::parallel_for(0, 100, 1, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) sum += i;
  });
  check(sum == 4950 && g_backend_calls == 1 && etrt::parallel_num_threads() == 4, "attached parallel backend");
  etrt::set_parallel_backend(nullptr);
  check(etrt::parallel_num_threads() == 1, "detached parallel backend");
}

void test_loaders_and_allocators() {
  const char bytes[] = "0123456789";
  etrt::BufferDataLoader loader(bytes, 10);
  auto part = loader.load(2, 3);
  check(part.ok() && std::memcmp(part->data(), "234", 3) == 0, "buffer loader view");
  check(!loader.load(8, 3).ok(), "out-of-range load fails");
  check(!loader.load(SIZE_MAX, 2).ok(), "overflowing load fails");

  auto missing = etrt::FileDataLoader::from("/nonexistent/dir/model.etrt");
  check(!missing.ok() && missing.error().code() == etrt::ErrorCode::IoError &&
            contains(missing.error().message(), "/nonexistent/dir/model.etrt") &&
            contains(missing.error().message(), "No such file"),
        "missing file names path and errno text", missing.ok() ? "" : missing.error().message());
  auto mmissing = etrt::MmapDataLoader::from("/nonexistent/dir/model.etrt");
  check(!mmissing.ok() && mmissing.error().code() == etrt::ErrorCode::IoError, "mmap of a missing file fails");

  etrt::MallocAllocator malloc_alloc;
  void* p = malloc_alloc.allocate(100, 64);
  void* q = malloc_alloc.allocate(1, 256);
  check(p && q && reinterpret_cast<uintptr_t>(p) % 64 == 0 && reinterpret_cast<uintptr_t>(q) % 256 == 0,
        "malloc allocator alignment");
  alignas(64) static uint8_t arena[256];
  etrt::BufferAllocator buf_alloc(arena, sizeof(arena));
  check(buf_alloc.allocate(100, 64) == arena && buf_alloc.allocate(100, 64) == arena + 128 &&
            buf_alloc.allocate(100, 64) == nullptr,
        "buffer allocator bumps and runs out");

  auto owned = etrt::OwnedTensor::from_vector(std::vector<float>{1, 2, 3, 4}, {2, 2});
  check(owned.ok() && owned->tensor().data_as<float>()[3] == 4.0f, "owned tensor from a vector");
  check(!etrt::OwnedTensor::from_vector(std::vector<float>{1, 2, 3}, {2, 2}).ok(), "owned tensor count mismatch");
}

void test_program_errors() {
  const char junk[] = "this is not a program at all";
  etrt::BufferDataLoader loader(junk, sizeof(junk));
  auto p = etrt::Program::load(&loader);
  check(!p.ok() && p.error().code() == etrt::ErrorCode::InvalidProgram && contains(p.error().message(), "magic"),
        "junk has bad magic", p.ok() ? "" : p.error().to_string());
  etrt::BufferDataLoader tiny(junk, 3);
  auto t = etrt::Program::load(&tiny);
  check(!t.ok() && contains(t.error().message(), "too short"), "tiny file is too short");
  etrt::Module module("/nonexistent/model.etrt");
  auto names = module.method_names();
  check(!names.ok() && names.error().code() == etrt::ErrorCode::IoError, "module reports an unreadable file");
}

}  // namespace

int main() {
  etrt::set_log_level(etrt::LogLevel::Off);  // registration failures below are expected
  check(std::string(etrt::version()).size() > 0, "version string");
  test_kernel_registry();
  test_backend_registry();
  test_tensor_and_value();
  test_parallel();
  test_loaders_and_allocators();
  test_program_errors();
  std::printf("%d passed, %d failed\n", g_passed, g_failed);
  return g_failed == 0 ? 0 : 1;
}
