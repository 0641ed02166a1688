// Helpers shared by the front-end tests: reading examples and test data, building object maps,
// and looking up the quota a compiled node holds in one dimension.
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "core/json.h"
#include "quota/frontends/quota_objects.h"
#include "quota/quota_graph.h"

namespace gf::frontend::testing {

inline std::string read_text(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << "cannot open " << path;
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline std::string example_path(const std::string& name) {
  return std::string(GPUFLEET_EXAMPLES_DIR) + "/" + name;
}

inline std::string testdata_path(const std::string& name) {
  return std::string(GPUFLEET_SOURCE_DIR) + "/tests/unit/quota/frontends/testdata/" + name;
}

// Every document of a YAML/JSON text, each parsed as a Kubernetes quota object (must succeed).
inline std::vector<QuotaObject> parse_k8s_text(const std::string& text) {
  std::vector<QuotaObject> out;
  Result<std::vector<Json>> docs = parse_documents(text);
  EXPECT_TRUE(docs.ok()) << docs.status().to_string();
  if (!docs.ok()) return out;
  for (const Json& doc : *docs) {
    Result<QuotaObject> obj = parse_k8s_object(doc);
    EXPECT_TRUE(obj.ok()) << obj.status().to_string();
    if (obj.ok()) out.push_back(std::move(*obj));
  }
  return out;
}

inline ObjectMap to_map(const std::vector<QuotaObject>& objects) {
  ObjectMap out;
  for (const QuotaObject& o : objects) out.insert_or_assign(o.key, o);
  return out;
}

// The quota `node` declares in dimension `r`, if any.
inline std::optional<quota::ResourceQuota> quota_of(const quota::QuotaGraph& g, quota::NodeId node,
                                                    ResourceId r) {
  for (const quota::ResourceQuota& q : g.spec(node).quotas) {
    if (q.resource == r) return q;
  }
  return std::nullopt;
}

// The error message of a failed Result/Status, "" when it succeeded.
template <typename R>
std::string error_of(const R& r) {
  if constexpr (std::is_same_v<R, Status>) {
    return r.ok() ? "" : r.message();
  } else {
    return r.ok() ? "" : r.status().message();
  }
}

}  // namespace gf::frontend::testing
