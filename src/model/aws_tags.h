// AWS resource tags as the AWS APIs bound them: at most 50 per resource, a key of 1 to 128
// characters, a value of at most 256, strings only (docs/aws-compatibility.md "Tags").
#pragma once

#include <map>
#include <string>

#include "core/json.h"

namespace gf {

inline constexpr size_t kMaxAwsTags = 50;
inline constexpr size_t kMaxAwsTagKey = 128;
inline constexpr size_t kMaxAwsTagValue = 256;

// The `key` member of the reader's object as tags (none: empty). Each broken rule fails the
// reader at `key`, naming the tag; what it returns then is not to be used.
std::map<std::string, std::string> read_aws_tags(ObjectReader& r, std::string_view key);

}  // namespace gf
