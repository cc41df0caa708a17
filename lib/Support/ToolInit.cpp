//===- ToolInit.cpp - process setup shared by Cleave's tools --------------===//

#include "cleave/Support/ToolInit.h"

#include <cstdlib>
#include <cstring>
#include <string>
#include <unistd.h>

// A sanitizer replaces malloc, so the glibc tunable would do nothing.
void cleave::initTool(int argc, char **argv) {
  (void)argc;
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(memory_sanitizer)
#define CLEAVE_SANITIZED_HEAP 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define CLEAVE_SANITIZED_HEAP 1
#endif

#if defined(__linux__) && defined(__GLIBC__) && !defined(CLEAVE_SANITIZED_HEAP)
  if (std::getenv("CLEAVE_NO_HUGEPAGES"))
    return;
  const char *tunables = std::getenv("GLIBC_TUNABLES");
  if (tunables && std::strstr(tunables, "glibc.malloc.hugetlb"))
    return;
  std::string value = "glibc.malloc.hugetlb=1";
  if (tunables && *tunables)
    value = std::string(tunables) + ":" + value;
  if (setenv("GLIBC_TUNABLES", value.c_str(), 1) != 0)
    return;
  execv("/proc/self/exe", argv);
  // exec failed: carry on with the default heap.
  unsetenv("GLIBC_TUNABLES");
  if (tunables)
    setenv("GLIBC_TUNABLES", tunables, 1);
#else
  (void)argv;
#endif
}
