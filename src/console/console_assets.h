// The web console's files (docs/console.md), built from console/ by esbuild at `make` time and
// compiled into the binary, so `gpufleet serve` needs no Node.js and no files beside it.
#pragma once

#include <string_view>

namespace gf {

struct ConsoleAsset {
  std::string_view name;          // "index.html", "app.js", "app.css"
  std::string_view content_type;  // "text/html; charset=utf-8", ...
  std::string_view body;
  std::string_view etag;  // a quoted hash of the body, for If-None-Match
};

// The asset of that name, or null (also when this binary was built without the console).
const ConsoleAsset* find_console_asset(std::string_view name);
// Whether this binary carries the console (CMake found Node.js and npm: GPUFLEET_CONSOLE).
bool console_built();

}  // namespace gf
