// The instance catalog (docs/architecture.md): what each instance type offers and what it costs per
// hour. The shipped defaults are data/catalog.json, embedded into the binary at build time; a
// deployment may load its own file with the same shape instead.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/json.h"
#include "core/result.h"

namespace gf {

// One catalog entry. Money is integer micro-dollars (docs/style.md): "98.32" USD/h is
// 98'320'000, parsed from the decimal text exactly, never through a double.
struct InstanceTypeInfo {
  std::string name;       // e.g. "ml.p5.48xlarge"
  int gpus = 0;           // accelerators per instance (Trainium chips count as GPUs)
  std::string gpu_model;  // "H100", "A10G", "Trainium"; empty when gpus == 0
  int vcpus = 0;
  int64_t memory_mib = 0;  // from MemoryGiB * 1024
  int network_gbps = 0;
  int64_t price_micros_per_hour = 0;
};

// Parses a non-negative decimal price such as "98.32", "0.5" or "12" into micro-dollars.
// At most 6 decimals; no sign, exponent, spaces or thousands separators.
Result<int64_t> parse_price_micros(std::string_view text);
// The inverse, shortest form: 98'320'000 -> "98.32", 12'000'000 -> "12", 500'000 -> "0.5".
std::string format_price_micros(int64_t micros);

class Catalog {
 public:
  Catalog() = default;

  // `catalog` is a JSON array of objects with the fields InstanceType, Gpus, GpuModel, VCpus,
  // MemoryGiB, NetworkGbps and PricePerHour (a decimal string). Errors name the field path,
  // e.g. `catalog[3].PricePerHour: invalid price "9.x" ...`. Duplicate names are an error.
  static Result<Catalog> from_json(const Json& catalog);
  static Result<Catalog> load_file(const std::string& path);
  // The embedded data/catalog.json, parsed once. The build's tests guarantee it is valid.
  static const Catalog& builtin();

  // nullptr when the type is not in the catalog.
  const InstanceTypeInfo* find(std::string_view name) const;
  std::vector<std::string> names() const;  // sorted
  size_t size() const { return types_.size(); }

 private:
  std::map<std::string, InstanceTypeInfo, std::less<>> types_;
};

}  // namespace gf
