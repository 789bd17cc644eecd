// libstdc++ symbols newer than the oldest libstdc++ the wheel supports, defined in each library
// so that none imports them (what gcc-toolset's libstdc++_nonshared.a does, for the few etrt
// needs). Hidden: each library binds its own copy, nothing is exported, and every type they
// use (std::bad_array_new_length, its typeinfo) is the shared runtime's, so exceptions and RTTI
// stay one runtime's across libraries and consumers.
#include <new>

namespace std {

// Exported only since GCC 11 (GLIBCXX_3.4.29, manylinux_2_34); GCC 11+'s std::allocator calls
// it when asked for more elements than fit in memory.
[[noreturn]] __attribute__((visibility("hidden"))) void __throw_bad_array_new_length();

void __throw_bad_array_new_length() { throw bad_array_new_length(); }

}  // namespace std
