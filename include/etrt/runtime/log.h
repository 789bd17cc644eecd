// Leveled logging to stderr. The threshold comes from the environment variable
// ETRT_LOG_LEVEL (debug, info, warning, error, off; default warning) and can be changed
// at run time with set_log_level().
#pragma once

#include "etrt/runtime/config.h"

namespace etrt {

enum class LogLevel : int { Debug = 0, Info = 1, Warning = 2, Error = 3, Off = 4 };

ETRT_EXPORT LogLevel log_level() noexcept;
ETRT_EXPORT void set_log_level(LogLevel level) noexcept;
ETRT_EXPORT bool log_enabled(LogLevel level) noexcept;
// printf-style; writes one line "etrt <level>: <message>" to stderr.
ETRT_EXPORT void log_message(LogLevel level, const char* fmt, ...) noexcept
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

}  // namespace etrt

// ETRT_LOG(Info, "loaded %s", name): the arguments are only evaluated when the level is on.
#define ETRT_LOG(level, ...)                                          \
  do {                                                                \
    if (::etrt::log_enabled(::etrt::LogLevel::level)) {               \
      ::etrt::log_message(::etrt::LogLevel::level, __VA_ARGS__);      \
    }                                                                 \
  } while (0)
