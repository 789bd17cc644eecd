// Build contract between etrt's libraries and the code that includes their headers.
#pragma once

#if !defined(__cplusplus) || __cplusplus < 201703L
#error "etrt needs C++17: link the etrt::runtime target or compile with ETRT_CXX_STANDARD"
#endif

#ifndef ETRT_API_VERSION
#error "ETRT_API_VERSION is not defined: link the etrt::runtime target or add ETRT_COMPILE_DEFINITIONS"
#endif

#if ETRT_API_VERSION != 1
#error "these etrt headers implement API version 1, but ETRT_API_VERSION says otherwise"
#endif

#if defined(__GNUC__)
#define ETRT_EXPORT __attribute__((visibility("default")))
#else
#define ETRT_EXPORT
#endif
