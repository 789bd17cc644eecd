#include "etrt/etdump/etdump.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <deque>
#include <new>
#include <unordered_map>

#include "etrt/fb/etdump_generated.h"
#include "etrt/runtime/tensor.h"

namespace etrt {
namespace etdump {
namespace {

constexpr uint32_t kVersion = 1;
constexpr uint32_t kNone = UINT32_MAX;

uint64_t now_ns() noexcept {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count());
}

struct Event {
  uint64_t start_ns;
  uint64_t end_ns;
  uint32_t name;
  uint32_t instruction;
  uint32_t run;
  uint32_t shape_begin;  // [shape_begin, shape_end) of Impl::shapes: per tensor, ndim then sizes
  uint32_t shape_end;
  EventKind kind;
};

struct Run {
  uint64_t start_ns;
  uint64_t end_ns;
  uint32_t method;
  uint32_t first_event;
  uint32_t end_event;
  bool ok;
};

// Names by the address the runtime passes them at (stable for a method's lifetime), checked
// against the text so a reused address cannot alias another name.
struct CacheSlot {
  const char* data = nullptr;
  size_t size = 0;
  uint32_t index = kNone;
};

}  // namespace

struct ETDumpGen::Impl {
  ETDumpConfig config;
  std::vector<Event> events;  // capacity config.max_events: push_back never reallocates
  std::vector<Run> runs;
  std::vector<int64_t> shapes;
  uint64_t dropped = 0;
  uint32_t open_run = kNone;
  uint32_t open_event = kNone;

  std::deque<std::string> names;  // stable addresses for the views below
  std::unordered_map<std::string_view, uint32_t> by_name;
  CacheSlot cache[64];

  uint32_t intern(std::string_view name) noexcept {
    CacheSlot& slot = cache[(reinterpret_cast<uintptr_t>(name.data()) >> 3) % 64];
    if (slot.data == name.data() && slot.size == name.size() && names[slot.index] == name) return slot.index;
    uint32_t index;
    auto it = by_name.find(name);
    if (it != by_name.end()) {
      index = it->second;
    } else {
      try {
        names.emplace_back(name);
        index = static_cast<uint32_t>(names.size() - 1);
        by_name.emplace(names.back(), index);
      } catch (...) {
        return kNone;
      }
    }
    slot = CacheSlot{name.data(), name.size(), index};
    return index;
  }

  void begin(EventKind kind, std::string_view name, uint32_t instruction) noexcept {
    open_event = kNone;
    if (open_run == kNone || events.size() == events.capacity()) {
      ++dropped;
      return;
    }
    uint32_t n = intern(name);
    if (n == kNone) {
      ++dropped;
      return;
    }
    open_event = static_cast<uint32_t>(events.size());
    uint32_t at = static_cast<uint32_t>(shapes.size());
    events.push_back(Event{0, 0, n, instruction, open_run, at, at, kind});
    events.back().start_ns = now_ns();  // last, so bookkeeping is not timed
  }

  void end(Span<const Value* const> outputs) noexcept {
    uint64_t t = now_ns();
    if (open_event == kNone) return;
    Event& e = events[open_event];
    open_event = kNone;
    e.end_ns = t;
    if (!config.record_shapes) return;
    size_t need = 0;
    for (const Value* v : outputs) need += v->is_tensor() ? 1 + static_cast<size_t>(v->to_tensor().dim()) : 0;
    if (need > shapes.capacity() - shapes.size()) return;  // no room: this event keeps no shapes
    for (const Value* v : outputs) {
      if (!v->is_tensor()) continue;
      const Tensor& tensor = v->to_tensor();
      shapes.push_back(tensor.dim());
      for (int d = 0; d < tensor.dim(); ++d) shapes.push_back(tensor.size(d));
    }
    e.shape_end = static_cast<uint32_t>(shapes.size());
  }
};

Result<std::unique_ptr<ETDumpGen>> ETDumpGen::create(const ETDumpConfig& config) noexcept try {
  if (config.max_events > UINT32_MAX / 2 || config.max_runs > UINT32_MAX / 2 ||
      config.max_shape_values > UINT32_MAX / 2) {
    return Error(ErrorCode::InvalidArgument, "ETDumpConfig limits must be below 2^31");
  }
  auto impl = std::make_unique<Impl>();
  impl->config = config;
  impl->events.reserve(config.max_events);
  impl->runs.reserve(config.max_runs);
  if (config.record_shapes) impl->shapes.reserve(config.max_shape_values);
  impl->by_name.reserve(64);
  return std::unique_ptr<ETDumpGen>(new ETDumpGen(std::move(impl)));
} catch (const std::bad_alloc&) {
  return Error(ErrorCode::OutOfMemory, "cannot preallocate the etdump event buffers");
}

ETDumpGen::ETDumpGen(std::unique_ptr<Impl> impl) noexcept : impl_(std::move(impl)) {}
ETDumpGen::~ETDumpGen() = default;

size_t ETDumpGen::num_runs() const noexcept { return impl_->runs.size(); }
size_t ETDumpGen::num_events() const noexcept { return impl_->events.size(); }
size_t ETDumpGen::dropped_events() const noexcept { return static_cast<size_t>(impl_->dropped); }

EventRecord ETDumpGen::event(size_t i) const noexcept {
  const Event& e = impl_->events[i];
  return EventRecord{impl_->names[e.name], e.kind, e.instruction, e.run, e.start_ns, e.end_ns};
}

void ETDumpGen::reset() noexcept {
  impl_->events.clear();
  impl_->runs.clear();
  impl_->shapes.clear();
  impl_->dropped = 0;
  impl_->open_run = kNone;
  impl_->open_event = kNone;
}

void ETDumpGen::begin_run(std::string_view method) noexcept {
  Impl& m = *impl_;
  m.open_run = kNone;
  if (m.runs.size() == m.runs.capacity()) return;  // its events are counted as dropped
  uint32_t name = m.intern(method);
  if (name == kNone) return;
  m.open_run = static_cast<uint32_t>(m.runs.size());
  uint32_t first = static_cast<uint32_t>(m.events.size());
  m.runs.push_back(Run{0, 0, name, first, first, false});
  m.runs.back().start_ns = now_ns();
}

void ETDumpGen::end_run(std::string_view, bool ok) noexcept {
  uint64_t t = now_ns();
  Impl& m = *impl_;
  if (m.open_run == kNone) return;
  Run& r = m.runs[m.open_run];
  r.end_ns = t;
  r.ok = ok;
  r.end_event = static_cast<uint32_t>(m.events.size());
  m.open_run = kNone;
}

void ETDumpGen::begin_operator(std::string_view op, uint32_t instruction) noexcept {
  impl_->begin(EventKind::Operator, op, instruction);
}

void ETDumpGen::end_operator(std::string_view, uint32_t, Span<const Value* const> outputs) noexcept {
  impl_->end(outputs);
}

void ETDumpGen::begin_delegate(std::string_view backend, uint32_t instruction) noexcept {
  impl_->begin(EventKind::Delegate, backend, instruction);
}

void ETDumpGen::end_delegate(std::string_view, uint32_t, Span<const Value* const> outputs) noexcept {
  impl_->end(outputs);
}

Result<std::vector<uint8_t>> ETDumpGen::serialize() const noexcept try {
  const Impl& m = *impl_;
  flatbuffers::FlatBufferBuilder fbb(1024 + m.events.size() * 48);
  std::vector<flatbuffers::Offset<flatbuffers::String>> names;
  names.reserve(m.names.size());
  for (const std::string& n : m.names) names.push_back(fbb.CreateString(n));
  auto names_vec = fbb.CreateVector(names);

  std::vector<flatbuffers::Offset<fb::Run>> runs;
  runs.reserve(m.runs.size());
  std::vector<flatbuffers::Offset<fb::Event>> events;
  std::vector<flatbuffers::Offset<fb::TensorShape>> shapes;
  for (size_t ri = 0; ri < m.runs.size(); ++ri) {
    const Run& r = m.runs[ri];
    // A run still open (serialized from inside execute) ends at the last recorded event.
    uint32_t end_event = ri == m.open_run ? static_cast<uint32_t>(m.events.size()) : r.end_event;
    events.clear();
    for (uint32_t ei = r.first_event; ei < end_event; ++ei) {
      const Event& e = m.events[ei];
      flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<fb::TensorShape>>> shapes_vec;
      if (m.config.record_shapes) {
        shapes.clear();
        for (uint32_t p = e.shape_begin; p < e.shape_end;) {
          auto ndim = static_cast<size_t>(m.shapes[p]);
          shapes.push_back(fb::CreateTensorShape(fbb, fbb.CreateVector(m.shapes.data() + p + 1, ndim)));
          p += static_cast<uint32_t>(ndim + 1);
        }
        shapes_vec = fbb.CreateVector(shapes);
      }
      events.push_back(fb::CreateEvent(fbb, e.name, static_cast<fb::EventKind>(e.kind), e.instruction, e.start_ns,
                                       e.end_ns, shapes_vec));
    }
    runs.push_back(fb::CreateRun(fbb, r.method, r.start_ns, r.end_ns, r.ok, fbb.CreateVector(events)));
  }
  auto root = fb::CreateETDump(fbb, kVersion, names_vec, fbb.CreateVector(runs), m.dropped);
  fb::FinishETDumpBuffer(fbb, root);
  return std::vector<uint8_t>(fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize());
} catch (const std::bad_alloc&) {
  return Error(ErrorCode::OutOfMemory, "out of memory while serializing an etdump");
}

Error ETDumpGen::write(const std::string& path) const noexcept try {
  auto data = serialize();
  if (!data.ok()) return data.error();
  // Same directory, so rename() is atomic; the pid keeps concurrent writers apart.
  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  auto io_error = [&](const char* what) {
    int err = errno;
    ::unlink(tmp.c_str());
    return Error(ErrorCode::IoError, std::string("cannot ") + what + " '" + path + "': " + std::strerror(err));
  };
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Error(ErrorCode::IoError, "cannot write '" + path + "': " + std::strerror(errno));
  const uint8_t* p = data->data();
  size_t left = data->size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int err = errno;
      ::close(fd);
      errno = err;
      return io_error("write");
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0) {
    int err = errno;
    ::close(fd);
    errno = err;
    return io_error("write");
  }
  if (::close(fd) != 0) return io_error("write");
  if (::rename(tmp.c_str(), path.c_str()) != 0) return io_error("rename a temporary file onto");
  return Error();
} catch (const std::bad_alloc&) {
  return Error(ErrorCode::OutOfMemory, "out of memory while writing an etdump");
}

}  // namespace etdump
}  // namespace etrt
