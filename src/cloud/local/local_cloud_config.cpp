// The local cloud's settings from serve's flags (docs/local-cloud.md): capacity per type, the
// network topology layout, s3:// lifecycle roots, and where a group's LifeCycleConfig points on
// this machine. Pure parsing; the driver that runs the instances is local_cloud.cpp.
#include <charconv>
#include <sstream>

#include "cloud/local/local_cloud.h"

namespace gf {

Result<TopologyLayout> LocalCloudConfig::parse_topology(const std::string& text) {
  const size_t x = text.find('x');
  Json layout{{"nodesPerBlock", nullptr}};
  for (const auto& [key, part] :
       {std::pair<const char*, std::string>{"nodesPerBlock", text.substr(0, x)},
        {"blocksPerSpine", x == std::string::npos ? "1" : text.substr(x + 1)}}) {
    int64_t n = 0;
    auto [ptr, ec] = std::from_chars(part.data(), part.data() + part.size(), n);
    if (ec != std::errc() || ptr != part.data() + part.size() || part.empty()) {
      return validation_error("--local-topology: \"" + text +
                              "\": expected NODES_PER_BLOCK[xBLOCKS_PER_SPINE] such as 16x4");
    }
    layout[key] = n;
  }
  return TopologyLayout::from_json(layout, "--local-topology");
}

Result<std::map<std::string, int64_t>> LocalCloudConfig::parse_capacity(const std::string& text) {
  std::map<std::string, int64_t> out;
  std::stringstream ss(text);
  for (std::string item; std::getline(ss, item, ',');) {
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    int64_t n = -1;
    if (eq != std::string::npos) {
      const std::string v = item.substr(eq + 1);
      auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
      if (ec != std::errc() || ptr != v.data() + v.size()) n = -1;
    }
    if (eq == std::string::npos || eq == 0 || n < 0) {
      return validation_error("--local-capacity: \"" + item +
                              "\": expected TYPE=COUNT such as ml.p5.48xlarge=10");
    }
    out[item.substr(0, eq)] = n;
  }
  return out;
}

Result<std::pair<std::string, std::string>> LocalCloudConfig::parse_lifecycle_root(
    const std::string& text) {
  const size_t eq = text.find('=');
  if (eq == std::string::npos || text.rfind("s3://", 0) != 0 || eq == 5 || eq + 1 == text.size()) {
    return validation_error("--lifecycle-root: \"" + text +
                            "\": expected s3://bucket[/prefix]=DIR such as "
                            "s3://amzn-s3-demo-bucket=./lifecycle");
  }
  std::string uri = text.substr(0, eq);
  while (uri.size() > 5 && uri.back() == '/') uri.pop_back();
  return std::make_pair(uri, text.substr(eq + 1));
}

Result<std::optional<std::string>> resolve_lifecycle_script(
    const Json& lc, const std::vector<std::pair<std::string, std::string>>& roots) {
  if (!lc.is_object()) return std::optional<std::string>();
  std::string uri = lc.value("SourceS3Uri", "");
  const std::string on_create = lc.value("OnCreate", "on_create.sh");
  if (uri.empty()) return std::optional<std::string>();
  while (uri.size() > 1 && uri.back() == '/') uri.pop_back();
  if (uri.rfind("file://", 0) == 0)
    return std::optional<std::string>(uri.substr(7) + "/" + on_create);
  if (uri.rfind("s3://", 0) != 0) {
    return validation_error("LifeCycleConfig.SourceS3Uri " + uri +
                            ": expected s3://… (mapped with --lifecycle-root) or file://…");
  }
  const std::pair<std::string, std::string>* best = nullptr;
  for (const auto& root : roots) {
    const bool match =
        uri == root.first || (uri.rfind(root.first, 0) == 0 && uri[root.first.size()] == '/');
    if (match && (!best || root.first.size() > best->first.size())) best = &root;
  }
  if (!best) {
    return validation_error("LifeCycleConfig.SourceS3Uri " + uri +
                            " maps to no local directory: start serve with --lifecycle-root " +
                            uri.substr(0, uri.find('/', 5)) + "=DIR");
  }
  const std::string rest = uri.substr(best->first.size());
  return std::optional<std::string>(best->second + rest + "/" + on_create);
}

}  // namespace gf
