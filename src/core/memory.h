#pragma once

#include <string>

// The process's allocator (docs/performance.md, "The allocator"): release builds link jemalloc,
// whose per-size-class slabs keep the control plane's churn of small JSON nodes, strings and map
// entries off glibc's free-list consolidation; sanitizer builds keep the sanitizer's own.
namespace gf {

// Which allocator serves malloc in this build: "jemalloc" or "glibc".
std::string allocator_name();

// Hands freed pages back to the OS now, as after a snapshot or a recovery built and dropped a
// whole state's JSON; without it RSS keeps the high-water mark until the allocator's own decay.
void release_free_memory();

// Caps the allocator's per-thread arenas of a long-running server, whose handler threads would
// otherwise each keep one at its peak size. A no-op where the allocator caps them itself.
void limit_allocator_arenas();

}  // namespace gf
