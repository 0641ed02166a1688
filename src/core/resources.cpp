#include "core/resources.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <utility>
#include <vector>

namespace gf {

namespace {

constexpr std::string_view kWellKnownNames[kNumWellKnownResources] = {
    "cpu", "memory", "nvidia.com/gpu", "kube-queue/max-jobs", "pods"};
constexpr size_t kMaxNameLength = 63;
constexpr size_t kMaxPrefixLength = 253;

bool is_alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

// One segment of a qualified name: alphanumeric at both ends, [A-Za-z0-9._-] inside.
bool valid_segment(std::string_view s, size_t max_length) {
  if (s.empty() || s.size() > max_length) return false;
  if (!is_alnum(s.front()) || !is_alnum(s.back())) return false;
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return is_alnum(c) || c == '.' || c == '_' || c == '-'; });
}

bool valid_resource_name(std::string_view name) {
  const size_t slash = name.find('/');
  if (slash == std::string_view::npos) return valid_segment(name, kMaxNameLength);
  return valid_segment(name.substr(0, slash), kMaxPrefixLength) &&
         valid_segment(name.substr(slash + 1), kMaxNameLength);
}

int64_t saturating_add(int64_t a, int64_t b) {
  int64_t r;
  if (!__builtin_add_overflow(a, b, &r)) return r;
  return b > 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
}

int64_t saturating_sub(int64_t a, int64_t b) {
  int64_t r;
  if (!__builtin_sub_overflow(a, b, &r)) return r;
  return b < 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
}

// (name, id) of the nonzero dimensions, sorted by name.
std::vector<std::pair<std::string_view, ResourceId>> nonzero_by_name(
    const ResourceVector& v, const ResourceRegistry& registry) {
  std::vector<std::pair<std::string_view, ResourceId>> out;
  const size_t n = registry.size();
  for (size_t i = 0; i < n; ++i) {
    const auto id = static_cast<ResourceId>(i);
    if (v.get(id) != 0) out.emplace_back(registry.name(id), id);
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

ResourceRegistry::ResourceRegistry() {
  for (ResourceId id = 0; id < kNumWellKnownResources; ++id) {
    names_[id] = std::string(kWellKnownNames[id]);
    ids_.emplace(names_[id], id);
  }
  size_.store(kNumWellKnownResources, std::memory_order_release);
}

Result<ResourceId> ResourceRegistry::intern(std::string_view name) {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto it = ids_.find(name); it != ids_.end()) return it->second;
  if (!valid_resource_name(name)) {
    return validation_error("invalid resource name \"" + std::string(name) +
                            "\": expected [prefix/]name, name 1-63 characters of letters, digits, "
                            "'.', '_' or '-', starting and ending with a letter or digit");
  }
  const size_t n = size_.load(std::memory_order_relaxed);
  if (n >= kMaxResources) {
    return validation_error(
        fmt::format("too many distinct resource names: cannot add \"{}\", at most {} are supported",
                    name, kMaxResources));
  }
  const auto id = static_cast<ResourceId>(n);
  names_[id] = std::string(name);
  ids_.emplace(names_[id], id);
  size_.store(n + 1, std::memory_order_release);
  return id;
}

std::optional<ResourceId> ResourceRegistry::find(std::string_view name) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = ids_.find(name);
  if (it == ids_.end()) return std::nullopt;
  return it->second;
}

ResourceVector& ResourceVector::operator+=(const ResourceVector& other) {
  for (size_t i = 0; i < kCapacity; ++i) v_[i] = saturating_add(v_[i], other.v_[i]);
  return *this;
}

ResourceVector& ResourceVector::operator-=(const ResourceVector& other) {
  for (size_t i = 0; i < kCapacity; ++i) v_[i] = saturating_sub(v_[i], other.v_[i]);
  return *this;
}

bool ResourceVector::fits_within(const ResourceVector& limit) const {
  for (size_t i = 0; i < kCapacity; ++i) {
    if (v_[i] > limit.v_[i]) return false;
  }
  return true;
}

bool ResourceVector::any_negative() const {
  return std::any_of(v_.begin(), v_.end(), [](int64_t x) { return x < 0; });
}

bool ResourceVector::is_zero() const {
  return std::all_of(v_.begin(), v_.end(), [](int64_t x) { return x == 0; });
}

std::string ResourceVector::to_string(const ResourceRegistry& registry) const {
  std::string out = "{";
  for (const auto& [name, id] : nonzero_by_name(*this, registry)) {
    if (out.size() > 1) out += ", ";
    out += std::string(name) + ": " + format_quantity(v_[id], registry.scale(id));
  }
  return out + "}";
}

nlohmann::json ResourceVector::to_json(const ResourceRegistry& registry) const {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [name, id] : nonzero_by_name(*this, registry)) {
    if (registry.scale(id) == QuantityScale::kMilli) {
      out[std::string(name)] = format_quantity(v_[id], QuantityScale::kMilli);
    } else {
      out[std::string(name)] = v_[id];
    }
  }
  return out;
}

Result<ResourceVector> ResourceVector::from_json(const nlohmann::json& obj,
                                                 ResourceRegistry& registry,
                                                 std::string_view field_path) {
  const std::string path(field_path);
  if (!obj.is_object()) {
    return validation_error(
        (path.empty() ? std::string() : path + ": ") +
        "expected an object mapping resource names to quantities, e.g. {\"cpu\": \"500m\", "
        "\"memory\": \"2Gi\"}, got " +
        obj.type_name());
  }
  ResourceVector out;
  for (const auto& [name, value] : obj.items()) {
    const std::string entry_path = path.empty() ? name : path + "." + name;
    Result<ResourceId> id = registry.intern(name);
    if (!id.ok()) return id.status().with_prefix(entry_path);
    Result<int64_t> q = parse_quantity_json(value, registry.scale(*id));
    if (!q.ok()) return q.status().with_prefix(entry_path);
    out.set(*id, *q);
  }
  return out;
}

}  // namespace gf
