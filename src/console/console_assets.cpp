#include "console/console_assets.h"

#include <span>

namespace gf {

// Defined by the generated console_data.cpp (cmake/embed_console.cmake), or empty when the
// console was not built.
extern const ConsoleAsset kConsoleAssets[];
extern const size_t kConsoleAssetCount;

const ConsoleAsset* find_console_asset(std::string_view name) {
  for (const ConsoleAsset& a : std::span(kConsoleAssets, kConsoleAssetCount)) {
    if (a.name == name) return &a;
  }
  return nullptr;
}

bool console_built() { return kConsoleAssetCount > 0; }

}  // namespace gf
