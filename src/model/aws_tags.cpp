#include "model/aws_tags.h"

#include <fmt/format.h>

namespace gf {

std::map<std::string, std::string> read_aws_tags(ObjectReader& r, std::string_view key) {
  std::map<std::string, std::string> tags;
  const Json* t = r.optional_object(key);
  if (t == nullptr) return tags;
  if (t->size() > kMaxAwsTags) {
    r.fail(key, fmt::format("at most {} tags, got {}", kMaxAwsTags, t->size()));
    return tags;
  }
  for (auto it = t->begin(); it != t->end(); ++it) {
    // Counted in UTF-8 characters, as AWS counts them.
    size_t chars = 0;
    for (unsigned char c : it.key()) chars += (c & 0xc0) != 0x80;
    if (chars == 0 || chars > kMaxAwsTagKey) {
      r.fail(key, fmt::format("tag key \"{}\" must be 1 to {} characters", printable(it.key(), 40),
                              kMaxAwsTagKey));
      break;
    }
    if (!it.value().is_string()) {
      r.fail(key, "tag \"" + printable(it.key(), 40) + "\" must be a string");
      break;
    }
    const std::string& value = it.value().get_ref<const std::string&>();
    size_t value_chars = 0;
    for (unsigned char c : value) value_chars += (c & 0xc0) != 0x80;
    if (value_chars > kMaxAwsTagValue) {
      r.fail(key, fmt::format("tag \"{}\" has a value over {} characters", printable(it.key(), 40),
                              kMaxAwsTagValue));
      break;
    }
    tags[it.key()] = value;
  }
  return tags;
}

}  // namespace gf
