// Reading the logs real instances keep (docs/local-cloud.md "Logs"): what a caller asks for and
// what comes back. Shared by the API, which serves them, and the cloud drivers that keep them.
#pragma once

#include <cstdint>
#include <string>

namespace gf {

struct LogQuery {
  std::string cluster, node;
  std::string source;  // "lifecycle" | "agent" | "pod"
  std::string pod, container;
  bool previous = false;  // a pod container's run before its last restart
  int64_t offset = -1;    // byte offset to read from; < 0: the tail
};

struct LogChunk {
  std::string text;
  int64_t next_offset = 0;  // where the next read continues (for --follow)
};

}  // namespace gf
