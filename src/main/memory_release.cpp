#include "main/memory_release.hpp"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace fedmetrics::cli {

MemoryRelease::MemoryRelease(std::chrono::milliseconds interval) {
#if defined(__GLIBC__)
  // malloc_trim(0) returns every whole free page of every arena (not only
  // the top of the heap), holding one arena's lock at a time: about a
  // millisecond for serve's tens of MB.
  thread_.start(interval, [] { ::malloc_trim(0); });
#else
  (void)interval;
#endif
}

}  // namespace fedmetrics::cli
