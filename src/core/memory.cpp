#include "core/memory.h"

#ifdef GPUFLEET_JEMALLOC
#include <jemalloc/jemalloc.h>
#elif defined(__GLIBC__)
#include <malloc.h>
#endif

#ifdef GPUFLEET_JEMALLOC
// Read by jemalloc when the process starts. Four arenas serve the loop, the HTTP handlers and the
// drivers without one per thread per core; a background thread returns pages freed more than a
// few seconds ago, so an idle server's RSS follows what it holds (docs/performance.md).
extern "C" {
// NOLINTNEXTLINE(cppcoreguidelines-avoid-non-const-global-variables): jemalloc's documented hook
const char* malloc_conf = "narenas:4,background_thread:true,dirty_decay_ms:5000,muzzy_decay_ms:0";
}
#endif

namespace gf {

std::string allocator_name() {
#ifdef GPUFLEET_JEMALLOC
  return "jemalloc";
#else
  return "glibc";
#endif
}

void release_free_memory() {
#ifdef GPUFLEET_JEMALLOC
  // "arena.<MALLCTL_ARENAS_ALL>.purge": every arena's unused dirty pages go back now.
  const std::string name = "arena." + std::to_string(MALLCTL_ARENAS_ALL) + ".purge";
  mallctl(name.c_str(), nullptr, nullptr, nullptr, 0);
#elif defined(__GLIBC__)
  malloc_trim(0);
#endif
}

void limit_allocator_arenas() {
#if !defined(GPUFLEET_JEMALLOC) && defined(__GLIBC__)
  mallopt(M_ARENA_MAX, 2);
#endif
}

}  // namespace gf
