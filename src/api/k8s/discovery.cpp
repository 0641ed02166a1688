// GET /version, /api, /api/v1, /apis, /apis/{group}, /apis/{group}/{version}: legacy discovery,
// and the aggregated form (apidiscovery.k8s.io/v2) when the Accept header asks for it. Everything
// comes from the kind registry (registry.h), so what discovery lists is what the door serves.
#include <fmt/format.h>

#include "api/k8s/k8s.h"
#include "api/k8s/registry.h"
#include "api/k8s/status.h"
#include "core/time.h"

namespace gf::k8s {
namespace {

constexpr std::string_view kAggregatedV2 =
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";

bool wants_aggregated(const HttpRequest& req) {
  const std::string accept = req.header_or("accept", "");
  return accept.find("g=apidiscovery.k8s.io") != std::string::npos &&
         accept.find("v=v2;") != std::string::npos &&
         accept.find("as=APIGroupDiscoveryList") != std::string::npos;
}

Json resource_entry(const KindInfo& k) {
  Json r{{"name", k.plural},
         {"singularName", k.singular},
         {"namespaced", k.namespaced},
         {"kind", k.kind},
         {"verbs", k.verbs()}};
  if (!k.short_names.empty()) r["shortNames"] = k.short_names;
  if (!k.group.empty() && k.kind != "Queue") r["categories"] = Json::array({"all"});
  return r;
}

Json resource_list(const std::string& group, const std::string& version) {
  Json resources = Json::array();
  for (const KindInfo& k : kinds()) {
    if (k.group != group || k.version != version) continue;
    resources.push_back(resource_entry(k));
    if (k.status) {
      resources.push_back({{"name", k.plural + "/status"},
                           {"singularName", ""},
                           {"namespaced", k.namespaced},
                           {"kind", k.kind},
                           {"verbs", Json::array({"get"})}});
    }
    if (k.log) {
      resources.push_back({{"name", k.plural + "/log"},
                           {"singularName", ""},
                           {"namespaced", k.namespaced},
                           {"kind", k.kind},
                           {"verbs", Json::array({"get"})}});
    }
  }
  const std::string gv = group.empty() ? version : group + "/" + version;
  return Json{{"kind", "APIResourceList"},
              {"apiVersion", "v1"},
              {"groupVersion", gv},
              {"resources", std::move(resources)}};
}

Json group_entry(const GroupVersion& g) {
  Json v{{"groupVersion", g.group + "/" + g.version}, {"version", g.version}};
  return Json{{"name", g.group}, {"versions", Json::array({v})}, {"preferredVersion", v}};
}

// One version of a group in the aggregated form.
Json aggregated_version(const std::string& group, const std::string& version) {
  Json resources = Json::array();
  for (const KindInfo& k : kinds()) {
    if (k.group != group || k.version != version) continue;
    Json gvk{{"group", k.group}, {"version", k.version}, {"kind", k.kind}};
    Json r{{"resource", k.plural},
           {"responseKind", gvk},
           {"scope", k.namespaced ? "Namespaced" : "Cluster"},
           {"singularResource", k.singular},
           {"verbs", k.verbs()}};
    if (!k.short_names.empty()) r["shortNames"] = k.short_names;
    if (!k.group.empty() && k.kind != "Queue") r["categories"] = Json::array({"all"});
    Json subs = Json::array();
    if (k.status)
      subs.push_back({{"subresource", "status"}, {"responseKind", gvk}, {"verbs", {"get"}}});
    if (k.log) {
      subs.push_back({{"subresource", "log"},
                      {"responseKind", {{"group", ""}, {"version", ""}, {"kind", "string"}}},
                      {"verbs", {"get"}}});
    }
    if (!subs.empty()) r["subresources"] = std::move(subs);
    resources.push_back(std::move(r));
  }
  return Json{{"version", version}, {"freshness", "Current"}, {"resources", std::move(resources)}};
}

HttpResponse aggregated(const std::vector<GroupVersion>& groups) {
  Json items = Json::array();
  for (const GroupVersion& g : groups) {
    items.push_back({{"metadata", {{"name", g.group}}},
                     {"versions", Json::array({aggregated_version(g.group, g.version)})}});
  }
  HttpResponse r = json_response(200, Json{{"kind", "APIGroupDiscoveryList"},
                                           {"apiVersion", "apidiscovery.k8s.io/v2"},
                                           {"metadata", Json::object()},
                                           {"items", std::move(items)}});
  r.content_type = std::string(kAggregatedV2);
  return r;
}

HttpResponse version(const HttpRequest&) {
  return json_response(200, Json{{"major", std::string(kKubeMajor)},
                                 {"minor", std::string(kKubeMinor)},
                                 {"gitVersion", fmt::format("v{}.{}.0+gpufleet.{}", kKubeMajor,
                                                            kKubeMinor, GPUFLEET_VERSION)},
                                 {"gitCommit", ""},
                                 {"gitTreeState", "clean"},
                                 {"buildDate", "1970-01-01T00:00:00Z"},
                                 {"goVersion", "none (gpufleet is C++)"},
                                 {"compiler", "gcc"},
                                 {"platform", "linux/amd64"}});
}

HttpResponse core_versions(const HttpRequest& req) {
  if (wants_aggregated(req)) return aggregated({GroupVersion{"", "v1"}});
  return json_response(
      200, Json{{"kind", "APIVersions"},
                {"versions", Json::array({"v1"})},
                {"serverAddressByClientCIDRs",
                 Json::array({{{"clientCIDR", "0.0.0.0/0"},
                               {"serverAddress", req.header_or("host", "127.0.0.1")}}})}});
}

HttpResponse groups(const HttpRequest& req) {
  if (wants_aggregated(req)) return aggregated(api_groups());
  Json list = Json::array();
  for (const GroupVersion& g : api_groups()) list.push_back(group_entry(g));
  return json_response(
      200, Json{{"kind", "APIGroupList"}, {"apiVersion", "v1"}, {"groups", std::move(list)}});
}

HttpResponse group(const HttpRequest& req) {
  const std::string& name = req.path_params.at("group");
  for (const GroupVersion& g : api_groups()) {
    if (g.group != name) continue;
    Json body = group_entry(g);
    body["kind"] = "APIGroup";
    body["apiVersion"] = "v1";
    return json_response(200, body);
  }
  return status_response(404, "NotFound", "the server could not find the requested resource");
}

HttpResponse group_version(const HttpRequest& req) {
  const std::string& g = req.path_params.at("group");
  const std::string& v = req.path_params.at("version");
  for (const GroupVersion& gv : api_groups()) {
    if (gv.group == g && gv.version == v) return json_response(200, resource_list(g, v));
  }
  return status_response(404, "NotFound", "the server could not find the requested resource");
}

}  // namespace

bool is_k8s_path(std::string_view path) {
  auto under = [path](std::string_view p) {
    return path == p || (path.size() > p.size() && path.starts_with(p) && path[p.size()] == '/');
  };
  return under("/api") || under("/apis") || under("/openapi") || path == "/version";
}

void register_discovery(Api& api) {
  Router& r = api.router();
  r.add("GET", "/version", version);
  r.add("GET", "/api", core_versions);
  r.add("GET", "/api/v1",
        [](const HttpRequest&) { return json_response(200, resource_list("", "v1")); });
  r.add("GET", "/apis", groups);
  r.add("GET", "/apis/{group}", group);
  r.add("GET", "/apis/{group}/{version}", group_version);
}

}  // namespace gf::k8s

namespace gf {

void register_k8s_routes(Api& api) {
  k8s::register_discovery(api);
  k8s::register_openapi(api);
  k8s::register_resources(api);
  api.add_response_shaper([](const HttpRequest& req, HttpResponse& r) {
    if (k8s::is_k8s_path(req.path)) k8s::to_status(r);
  });
}

}  // namespace gf
