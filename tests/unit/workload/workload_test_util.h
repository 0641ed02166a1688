// Helpers shared by the workload tests: reading the published examples and parsing YAML text.
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "core/json.h"

namespace gf::workload::testing {

inline std::string read_example(const std::string& name) {
  const std::string path = std::string(GPUFLEET_EXAMPLES_DIR) + "/" + name;
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << "cannot open " << path;
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline Json yaml(const std::string& text) {
  Result<Json> doc = parse_yaml(text);
  EXPECT_TRUE(doc.ok()) << doc.status().to_string();
  return doc.ok() ? *doc : Json();
}

// The error message of a failed Result, "" when it succeeded.
template <typename R>
std::string error_of(const R& r) {
  return r.ok() ? "" : r.status().message();
}

}  // namespace gf::workload::testing
