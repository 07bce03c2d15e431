#include "fedmetrics/transport/memory_release.hpp"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace fedmetrics::transport {

void MemoryRelease::start() {
#if defined(__GLIBC__)
  // malloc_trim(0) returns every whole free page of every arena (not only
  // the top of the heap), holding one arena's lock at a time: about a
  // millisecond for serve's tens of MB.
  ticks_.start(executor_, "memory release", interval_, [] { ::malloc_trim(0); });
#endif
}

}  // namespace fedmetrics::transport
