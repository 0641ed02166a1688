// Kubernetes label selectors (`-l` of kubectl; docs/cli.md): a comma-separated list of
// requirements that must all hold for a set of labels:
//   key=value  key==value  key!=value   (equality; != also holds when the key is absent)
//   key  !key                            (exists, does not exist)
//   key in (a,b)  key notin (a,b)        (set; notin also holds when the key is absent)
// An empty selector matches everything. Keys and values are taken as written (no validation of
// Kubernetes' name syntax beyond refusing blanks and the operators' own characters).
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/json.h"
#include "core/result.h"

namespace gf {

class LabelSelector {
 public:
  // The error names the requirement that is malformed.
  static Result<LabelSelector> parse(std::string_view text);

  bool empty() const { return requirements_.empty(); }
  bool matches(const std::map<std::string, std::string>& labels) const;
  // Labels as a JSON object of strings (metadata.labels, a node's Labels); anything else is
  // no labels.
  bool matches(const Json& labels) const;

 private:
  enum class Op { kEquals, kNotEquals, kExists, kNotExists, kIn, kNotIn };
  struct Requirement {
    std::string key;
    Op op = Op::kExists;
    std::vector<std::string> values;
  };
  std::vector<Requirement> requirements_;
};

}  // namespace gf
