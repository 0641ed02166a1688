#include "model/catalog.h"

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <sstream>

namespace gf {

// Defined in the file the build generates from data/catalog.json (see CMakeLists.txt).
extern const char kBuiltinCatalogJson[];

namespace {

constexpr int kMaxPriceDecimals = 6;
constexpr int64_t kMicrosPerUnit = 1'000'000;
constexpr int kMaxCount = 1 << 20;  // far above any real instance, far below int overflow

Status invalid_price(std::string_view text) {
  return validation_error("invalid price \"" + std::string(text) +
                          "\" (expected a non-negative decimal string with at most 6 decimals, "
                          "e.g. \"98.32\")");
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Reads an integer field that must lie in [min, max]; 0 when absent or wrong (reader holds the
// error then).
int64_t read_bounded_int(ObjectReader& r, std::string_view key, int64_t min, int64_t max) {
  const int64_t v = r.required_int(key);
  if (r.ok() && (v < min || v > max)) {
    r.fail(key, fmt::format("must be between {} and {}, got {}", min, max, v));
    return 0;
  }
  return v;
}

Result<InstanceTypeInfo> parse_entry(const Json& value, const std::string& path) {
  ObjectReader r(value, path);
  InstanceTypeInfo info;
  info.name = r.required_string("InstanceType");
  if (r.ok() && info.name.empty()) r.fail("InstanceType", "must not be empty");
  info.gpus = static_cast<int>(read_bounded_int(r, "Gpus", 0, kMaxCount));
  info.gpu_model = r.optional_string("GpuModel").value_or("");
  info.vcpus = static_cast<int>(read_bounded_int(r, "VCpus", 1, kMaxCount));
  const int64_t memory_gib =
      read_bounded_int(r, "MemoryGiB", 1, std::numeric_limits<int64_t>::max() / 1024);
  info.memory_mib = memory_gib * 1024;
  info.network_gbps = static_cast<int>(read_bounded_int(r, "NetworkGbps", 0, kMaxCount));
  const std::string price = r.required_string("PricePerHour");
  if (r.ok()) {
    Result<int64_t> micros = parse_price_micros(price);
    if (micros.ok()) {
      info.price_micros_per_hour = *micros;
    } else {
      r.fail("PricePerHour", micros.status().message());
    }
  }
  // A model without GPUs (or GPUs without a model) is almost certainly a typo in the file.
  if (r.ok() && info.gpus > 0 && info.gpu_model.empty()) {
    r.fail("GpuModel", "is required when Gpus > 0");
  }
  if (r.ok() && info.gpus == 0 && !info.gpu_model.empty()) {
    r.fail("GpuModel", "must be empty when Gpus is 0, got \"" + info.gpu_model + "\"");
  }
  if (!r.ok()) return r.status();
  return info;
}

}  // namespace

Result<int64_t> parse_price_micros(std::string_view text) {
  const size_t dot = text.find('.');
  const std::string_view whole = text.substr(0, dot);
  const std::string_view frac =
      dot == std::string_view::npos ? std::string_view() : text.substr(dot + 1);
  // "1." and ".5" are rejected on purpose: prices in the file should read unambiguously.
  if (whole.empty() || (dot != std::string_view::npos && frac.empty())) {
    return invalid_price(text);
  }
  if (frac.size() > static_cast<size_t>(kMaxPriceDecimals)) return invalid_price(text);
  int64_t units = 0;
  for (char c : whole) {
    if (!is_digit(c)) return invalid_price(text);
    if (units > (std::numeric_limits<int64_t>::max() / kMicrosPerUnit - 9) / 10) {
      return invalid_price(text);  // would overflow micro-dollars
    }
    units = units * 10 + (c - '0');
  }
  int64_t micros = 0;
  int64_t scale = kMicrosPerUnit;
  for (char c : frac) {
    if (!is_digit(c)) return invalid_price(text);
    scale /= 10;
    micros += (c - '0') * scale;
  }
  return units * kMicrosPerUnit + micros;
}

std::string format_price_micros(int64_t micros) {
  const bool negative = micros < 0;
  // Work in unsigned so that INT64_MIN negates without overflow.
  const uint64_t magnitude =
      negative ? 0 - static_cast<uint64_t>(micros) : static_cast<uint64_t>(micros);
  std::string out = (negative ? "-" : "") + std::to_string(magnitude / kMicrosPerUnit);
  uint64_t frac = magnitude % kMicrosPerUnit;
  if (frac == 0) return out;
  std::string digits = std::to_string(frac);
  digits.insert(0, kMaxPriceDecimals - digits.size(), '0');
  while (digits.back() == '0') digits.pop_back();
  return out + "." + digits;
}

Result<Catalog> Catalog::from_json(const Json& catalog) {
  if (!catalog.is_array()) {
    return validation_error("catalog: expected an array of instance types, got " +
                            describe_json_value(catalog));
  }
  Catalog out;
  for (size_t i = 0; i < catalog.size(); ++i) {
    const std::string path = path_index("catalog", i);
    GF_ASSIGN_OR_RETURN(InstanceTypeInfo info, parse_entry(catalog[i], path));
    if (out.types_.count(info.name) > 0) {
      return validation_error(path_join(path, "InstanceType") + ": duplicate instance type \"" +
                              info.name + "\"");
    }
    std::string name = info.name;
    out.types_.emplace(std::move(name), std::move(info));
  }
  return out;
}

Result<Catalog> Catalog::load_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return validation_error("catalog file " + path + ": cannot be read");
  std::ostringstream text;
  text << in.rdbuf();
  Result<Json> json = parse_json(text.str());
  if (!json.ok()) return json.status().with_prefix("catalog file " + path);
  Result<Catalog> catalog = from_json(*json);
  if (!catalog.ok()) return catalog.status().with_prefix("catalog file " + path);
  return catalog;
}

const Catalog& Catalog::builtin() {
  static const Catalog* const kBuiltin = [] {
    Result<Json> json = parse_json(kBuiltinCatalogJson);
    Result<Catalog> catalog = json.ok() ? from_json(*json) : Result<Catalog>(json.status());
    if (!catalog.ok()) {
      // Impossible in a tested build: data/catalog.json is checked by the unit tests.
      std::fprintf(stderr, "gpufleet: embedded data/catalog.json is invalid: %s\n",
                   catalog.status().to_string().c_str());
      std::abort();
    }
    return new Catalog(std::move(catalog).value());
  }();
  return *kBuiltin;
}

const InstanceTypeInfo* Catalog::find(std::string_view name) const {
  auto it = types_.find(name);
  return it == types_.end() ? nullptr : &it->second;
}

std::vector<std::string> Catalog::names() const {
  std::vector<std::string> out;
  out.reserve(types_.size());
  for (const auto& [name, info] : types_) out.push_back(name);
  return out;
}

}  // namespace gf
