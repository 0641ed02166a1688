#include <string_view>

#include "cli/app.h"

int main(int argc, char** argv) {
  // Run as `kubectl-amc` (a link to this binary), it is kubectl's `amc` plugin.
  std::string_view name = argc > 0 ? argv[0] : "";
  if (const size_t slash = name.rfind('/'); slash != std::string_view::npos)
    name.remove_prefix(slash + 1);
  if (name == "kubectl-amc") return gf::run_kubectl_amc(argc, argv);
  return gf::run_cli(argc, argv);
}
