#include "etrt/runtime/log.h"

#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <strings.h>

namespace etrt {
namespace {

LogLevel level_from_env() noexcept {
  const char* env = std::getenv("ETRT_LOG_LEVEL");
  if (env == nullptr || *env == '\0') return LogLevel::Warning;
  struct Name {
    const char* name;
    LogLevel level;
  };
  static const Name kNames[] = {
      {"debug", LogLevel::Debug}, {"info", LogLevel::Info},   {"warning", LogLevel::Warning},
      {"warn", LogLevel::Warning}, {"error", LogLevel::Error}, {"off", LogLevel::Off},
      {"0", LogLevel::Debug},     {"1", LogLevel::Info},      {"2", LogLevel::Warning},
      {"3", LogLevel::Error},     {"4", LogLevel::Off},
  };
  for (const Name& n : kNames) {
    if (strcasecmp(env, n.name) == 0) return n.level;
  }
  std::fprintf(stderr, "etrt warning: ignoring unknown ETRT_LOG_LEVEL '%s'\n", env);
  return LogLevel::Warning;
}

// Function-local so logging works from other libraries' static initializers.
std::atomic<int>& threshold() noexcept {
  static std::atomic<int> value{static_cast<int>(level_from_env())};
  return value;
}

const char* level_name(LogLevel level) noexcept {
  switch (level) {
    case LogLevel::Debug: return "debug";
    case LogLevel::Info: return "info";
    case LogLevel::Warning: return "warning";
    case LogLevel::Error: return "error";
    case LogLevel::Off: return "off";
  }
  return "?";
}

}  // namespace

LogLevel log_level() noexcept { return static_cast<LogLevel>(threshold().load(std::memory_order_relaxed)); }

void set_log_level(LogLevel level) noexcept {
  threshold().store(static_cast<int>(level), std::memory_order_relaxed);
}

bool log_enabled(LogLevel level) noexcept {
  return level != LogLevel::Off &&
         static_cast<int>(level) >= threshold().load(std::memory_order_relaxed);
}

void log_message(LogLevel level, const char* fmt, ...) noexcept {
  char buf[1024];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(buf, sizeof(buf), fmt, args);
  va_end(args);
  // One fprintf call so lines from different threads do not interleave.
  std::fprintf(stderr, "etrt %s: %s\n", level_name(level), buf);
}

}  // namespace etrt
