// json_diff.h: a record as what differs from a base, and back.
#include "core/json_diff.h"

namespace gf {

Json json_minus(const Json& base, const Json& value) {
  if (!base.is_object() || !value.is_object()) return value;
  Json out = Json::object();
  for (auto it = value.begin(); it != value.end(); ++it) {
    const auto b = base.find(it.key());
    if (b == base.end()) {
      out[it.key()] = it.value();
    } else if (*b == it.value()) {
      continue;
    } else if (b->is_object() && it.value().is_object()) {
      out[it.key()] = json_minus(*b, it.value());
    } else {
      out[it.key()] = it.value();
    }
  }
  return out;
}

Json json_overlay(Json base, const Json& patch) {
  if (!base.is_object() || !patch.is_object()) return patch;
  for (auto it = patch.begin(); it != patch.end(); ++it) {
    auto b = base.find(it.key());
    if (b != base.end() && b->is_object() && it.value().is_object()) {
      *b = json_overlay(std::move(*b), it.value());
    } else {
      base[it.key()] = it.value();
    }
  }
  return base;
}

}  // namespace gf
