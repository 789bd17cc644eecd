// Prints what the one registry in libtoysdk_core holds: a plugin is there only if the app
// retained libtoysdk_plugin.so (it references nothing in it).
#include <cstdio>

#include "toysdk/core.h"
#ifdef TOYSDK_APP_EXTRA
#include "toysdk/extra.h"
#endif

int main() {
  std::printf("api=%d plugins=%d toy_plugin=%d\n", toysdk::api_version(), toysdk::plugin_count(),
              toysdk::has_plugin("toy_plugin") ? 1 : 0);
#ifdef TOYSDK_APP_EXTRA
  std::printf("compressed=%zu\n", toysdk::compressed_size("hello hello hello hello"));
  std::printf("bzip2=%s\n", toysdk::bzip2_version());
#endif
  return 0;
}
