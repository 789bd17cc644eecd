// glibc 2.28 has no <sys/single_threaded.h> (2.32 added it), but Zig's glibc headers hold one
// that refuses older targets, and GCC 12's libstdc++ includes it when it exists. This stand-in
// says "never single-threaded", so libstdc++ always takes its atomic paths: what it does on a
// glibc without the header.
#pragma once
static const char __libc_single_threaded = 0;
