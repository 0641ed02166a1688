// The objects of the Kubernetes door (docs/kubernetes.md "What is served"): list and get of every
// kind in the registry, with label and field selectors, pages and Tables; create, update, merge
// and JSON patch, and delete of the writable kinds through POST /v1/apply and
// DELETE /v1/objects (so a write is authorized, idempotent and audited as that call); pods' logs.
#include <fmt/format.h>

#include <algorithm>

#include "api/door.h"
#include "api/k8s/k8s.h"
#include "api/k8s/objects.h"
#include "api/k8s/status.h"
#include "api/k8s/table.h"
#include "api/k8s/watch.h"

namespace gf::k8s {
namespace {

HttpResponse bad_request(const std::string& message) {
  return status_response(400, "BadRequest", message);
}

// Page tokens name the last item's namespace/name: the next page starts after it.
std::string item_key(const Json& o) {
  const Json m = o.value("metadata", Json::object());
  return m.value("namespace", "") + "/" + m.value("name", "");
}

// ---- writes ---------------------------------------------------------------------------------

Result<Json> one_object(const HttpRequest& req) {
  GF_ASSIGN_OR_RETURN(auto docs, parse_documents(req.body));
  if (docs.size() != 1 || !docs.front().is_object())
    return validation_error("body: expected one object");
  return docs.front();
}

// Strict (kubectl's default), Warn (the API's) or Ignore.
Result<std::string> field_validation(const HttpRequest& req) {
  const std::string v = req.query_or("fieldValidation", "Warn");
  if (v == "Strict" || v == "Warn" || v == "Ignore") return v;
  return validation_error("fieldValidation: expected Strict, Warn or Ignore, got \"" +
                          printable(v, 40) + "\"");
}

std::string warning_header(const std::vector<std::string>& warnings) {
  std::string out;
  for (const std::string& w : warnings) {
    std::string quoted;
    for (char c : w) quoted += (c == '"' || c == '\\') ? std::string("\\") + c : std::string(1, c);
    out += (out.empty() ? "" : ", ") + std::string("299 - \"") + quoted + "\"";
  }
  return out;
}

// Runs `doc` through POST /v1/apply (a dry run first when Strict, so an unknown field refuses the
// write), then answers the stored object with `code`.
HttpResponse apply_and_read(Api& api, const HttpRequest& req, const Target& t, Json doc, int code) {
  const Subject subject{t.kind, t.name, true};
  auto mode = field_validation(req);
  if (!mode.ok()) return bad_request(mode.status().message());
  auto run = [&](bool dry) {
    door::Inner in{.method = "POST", .path = "/v1/apply", .body = doc};
    if (dry) in.query["dryRun"] = "All";
    return door::call(api, req, std::move(in));
  };
  std::vector<std::string> warnings;
  auto collect = [&](const door::Answer& a) {
    warnings.clear();
    for (const Json& item : a.body.value("items", Json::array()))
      for (const Json& w : item.value("warnings", Json::array()))
        if (w.is_string()) warnings.push_back(w.get<std::string>());
  };
  if (*mode == "Strict") {
    door::Answer dry = run(true);
    if (!dry.ok()) {
      to_status(dry.response, subject);
      return dry.response;
    }
    collect(dry);
    std::string joined;  // Strict refuses unknown fields; other warnings (a held job) still warn
    for (const std::string& w : warnings) {
      if (w.find(": unknown field") != std::string::npos)
        joined += (joined.empty() ? "" : ", ") + w;
    }
    if (!joined.empty()) {
      return bad_request(
          fmt::format("{} in version \"{}\" cannot be handled as a {}: strict "
                      "decoding error: {}",
                      t.kind->kind, t.kind->version, t.kind->kind, joined));
    }
  }
  door::Answer a = run(false);
  if (!a.ok()) {
    to_status(a.response, subject);
    return a.response;
  }
  collect(a);
  HttpResponse out;
  if (req.query.contains("dryRun")) {
    complete(doc, *t.kind, std::to_string(api.loop().view()->applied_seq));
    out = json_response(code, doc);
  } else {
    Fetched f = get_object(api, req, t);
    if (f.error) return *f.error;
    out = json_response(code, f.items.front());
  }
  if (*mode == "Ignore") {
    std::erase_if(warnings, [](const std::string& w) {
      return w.find(": unknown field") != std::string::npos;
    });
  }
  if (!warnings.empty()) out.headers["Warning"] = warning_header(warnings);
  return out;
}

// The body's apiVersion, kind, namespace and name against the URL's.
std::optional<HttpResponse> check_identity(const Target& t, Json& doc, bool create) {
  if (doc.value("apiVersion", "") != t.kind->group_version() ||
      doc.value("kind", "") != t.kind->kind) {
    return bad_request(
        fmt::format("the object's apiVersion and kind ({} {}) are not {} {}, "
                    "which this URL serves",
                    doc.value("apiVersion", "<none>"), doc.value("kind", "<none>"),
                    t.kind->group_version(), t.kind->kind));
  }
  Json& meta = doc["metadata"];
  if (!meta.is_object()) return bad_request("metadata: expected an object");
  if (t.kind->namespaced) {
    if (meta.contains("namespace") && meta["namespace"] != t.ns) {
      return bad_request(
          "the namespace of the provided object does not match the namespace "
          "sent on the request");
    }
    meta["namespace"] = t.ns;
  }
  if (!meta.contains("name") || !meta["name"].is_string() ||
      meta["name"].get<std::string>().empty()) {
    return status_response(422, "Invalid",
                           fmt::format("{}.{} is invalid: metadata.name: Required value: name is "
                                       "required (generateName is not served)",
                                       t.kind->kind, t.kind->group));
  }
  if (!create && meta["name"] != t.name)
    return bad_request("the name of the object (" + meta["name"].get<std::string>() +
                       ") does not match the name on the URL (" + t.name + ")");
  return std::nullopt;
}

HttpResponse not_writable(const Target& t, const HttpRequest& req) {
  return status_response(405, "MethodNotAllowed",
                         fmt::format("{} is read only here: {} is not served (docs/kubernetes.md)",
                                     t.kind->qualified(), req.method));
}

HttpResponse create(Api& api, const HttpRequest& req, Target t) {
  if (!t.kind->writable || !t.name.empty()) return not_writable(t, req);
  auto body = one_object(req);
  if (!body.ok()) return bad_request(body.status().message());
  if (auto bad = check_identity(t, *body, true)) return *bad;
  t.name = (*body)["metadata"]["name"].get<std::string>();
  Fetched existing = get_object(api, req, t);
  if (!existing.error) {
    return status_response(
        409, "AlreadyExists", fmt::format("{} \"{}\" already exists", t.kind->qualified(), t.name),
        Json{{"name", t.name}, {"group", t.kind->group}, {"kind", t.kind->plural}});
  }
  if (existing.error->status != 404) return *existing.error;
  return apply_and_read(api, req, t, std::move(*body), 201);
}

HttpResponse update(Api& api, const HttpRequest& req, const Target& t) {
  if (!t.kind->writable || t.name.empty() || !t.sub.empty()) return not_writable(t, req);
  auto body = one_object(req);
  if (!body.ok()) return bad_request(body.status().message());
  if (auto bad = check_identity(t, *body, false)) return *bad;
  Fetched existing = get_object(api, req, t);
  if (existing.error) return *existing.error;
  return apply_and_read(api, req, t, std::move(*body), 200);
}

// The object as a user wrote it: without what the server sets.
Json as_written(Json o) {
  o.erase("status");
  if (o.contains("metadata") && o["metadata"].is_object()) {
    for (const char* k :
         {"uid", "creationTimestamp", "resourceVersion", "generation", "managedFields"})
      o["metadata"].erase(k);
  }
  return o;
}

// The paths (".spec.x.y") where `applied` sets a value other than the one `current` has; a list
// is one value (lists are atomic here), and a field `current` lacks conflicts with nothing.
void differing_fields(const Json& applied, const Json& current, const std::string& path,
                      std::vector<std::string>& out) {
  if (applied.is_object() && current.is_object()) {
    for (auto it = applied.begin(); it != applied.end(); ++it) {
      auto c = current.find(it.key());
      if (c != current.end()) differing_fields(it.value(), *c, path + "." + it.key(), out);
    }
    return;
  }
  if (applied != current) out.push_back(path);
}

// Server-side apply (`kubectl apply --server-side`, docs/kubernetes.md): the object is created
// when missing; otherwise the applied fields are set over the current object. gpufleet keeps no
// field managers, so a field whose current value differs from the applied one is a conflict
// until `force` takes it, whoever set it.
HttpResponse server_side_apply(Api& api, const HttpRequest& req, const Target& t) {
  if (req.query_or("fieldManager", "").empty()) {
    return status_response(
        422, "Invalid",
        "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: "
        "is required for apply patch");
  }
  bool force = false;
  if (auto f = req.query.find("force"); f != req.query.end() && !parse_go_bool(f->second, force))
    return bad_request("force: expected a boolean");
  auto applied = one_object(req);
  if (!applied.ok()) return bad_request(applied.status().message());
  if (auto bad = check_identity(t, *applied, false)) return *bad;
  Fetched current = get_object(api, req, t);
  if (current.error) {
    if (current.error->status != 404) return *current.error;
    return apply_and_read(api, req, t, std::move(*applied), 201);
  }
  Json doc = as_written(current.items.front());
  std::vector<std::string> conflicts;
  differing_fields(*applied, doc, "", conflicts);
  if (!conflicts.empty() && !force) {
    Json causes = Json::array();
    std::string list;
    for (const std::string& c : conflicts) {
      causes.push_back({{"reason", "FieldManagerConflict"},
                        {"message", "conflict with the current value"},
                        {"field", c}});
      list += "\n- " + c;
    }
    return status_response(
        409, "Conflict",
        fmt::format("Apply failed with {} conflict{}: conflict with the current value (gpufleet "
                    "keeps no field managers; docs/kubernetes.md):{}",
                    conflicts.size(), conflicts.size() == 1 ? "" : "s", list),
        Json{{"name", t.name},
             {"group", t.kind->group},
             {"kind", t.kind->plural},
             {"causes", std::move(causes)}});
  }
  doc.merge_patch(*applied);
  return apply_and_read(api, req, t, as_written(std::move(doc)), 200);
}

HttpResponse patch(Api& api, const HttpRequest& req, const Target& t) {
  if (!t.kind->writable || t.name.empty() || !t.sub.empty()) return not_writable(t, req);
  const std::string type = req.header_or("content-type", "");
  if (type.rfind("application/apply-patch+yaml", 0) == 0) return server_side_apply(api, req, t);
  if (req.query.contains("force"))
    return bad_request("force: Forbidden: may not be specified for non-apply patch");
  const bool merge = type.rfind("application/merge-patch+json", 0) == 0;
  const bool json_patch = type.rfind("application/json-patch+json", 0) == 0;
  if (!merge && !json_patch) {
    return status_response(
        415, "UnsupportedMediaType",
        "the body of the request was in an unknown format - accepted media types include: "
        "application/json-patch+json, application/merge-patch+json, "
        "application/apply-patch+yaml");
  }
  auto body = parse_json(req.body);
  if (!body.ok()) return bad_request("body: " + body.status().message());
  Fetched current = get_object(api, req, t);
  if (current.error) return *current.error;
  Json doc = as_written(current.items.front());
  if (merge) {
    if (!body->is_object()) return bad_request("body: a merge patch is a JSON object");
    doc.merge_patch(*body);
  } else {
    if (!body->is_array()) return bad_request("body: a JSON patch is an array of operations");
    try {
      doc = doc.patch(*body);
    } catch (const std::exception& e) {
      return status_response(422, "Invalid",
                             std::string("the JSON patch does not apply: ") + e.what());
    }
  }
  if (auto bad = check_identity(t, doc, false)) return *bad;
  return apply_and_read(api, req, t, as_written(std::move(doc)), 200);
}

HttpResponse remove(Api& api, const HttpRequest& req, const Target& t) {
  if (!t.kind->writable || t.name.empty() || !t.sub.empty()) return not_writable(t, req);
  std::string path =
      "/v1/objects/" + t.kind->objects + (t.kind->namespaced ? "/" + t.ns : "") + "/" + t.name;
  Fetched existing = get_object(api, req, t);  // also: a policy of the other group is not ours
  if (existing.error) return *existing.error;
  door::Answer a = door::call(api, req, door::Inner{.method = "DELETE", .path = path});
  if (!a.ok()) {
    to_status(a.response, Subject{t.kind, t.name});
    return a.response;
  }
  return json_response(200, success_status(Subject{t.kind, t.name}));
}

// ---- reads ----------------------------------------------------------------------------------

HttpResponse pod_log(Api& api, const HttpRequest& req, const Target& t) {
  for (const char* unsupported : {"sinceSeconds", "sinceTime", "timestamps", "limitBytes"}) {
    if (req.query.contains(unsupported))
      return bad_request(std::string(unsupported) +
                         ": not served by gpufleet (docs/kubernetes.md)");
  }
  door::Inner in{.path = "/v1/objects/pods/" + t.ns + "/" + t.name + "/logs", .text = true};
  if (auto c = req.query.find("container"); c != req.query.end()) in.query["container"] = c->second;
  if (auto p = req.query.find("previous"); p != req.query.end()) {
    bool prev = false;
    if (!parse_go_bool(p->second, prev)) return bad_request("previous: expected a boolean");
    in.query["previous"] = prev ? "true" : "false";
  }
  door::Answer a = door::call(api, req, std::move(in));
  if (!a.ok()) {
    // The log route's own words ("no previous run of that container…"): the pod may exist.
    to_status(a.response);
    return a.response;
  }
  std::string text = a.response.body;
  if (auto tail = req.query.find("tailLines"); tail != req.query.end()) {
    const long long n = std::atoll(tail->second.c_str());
    if (n < 0 || tail->second.find_first_not_of("0123456789") != std::string::npos)
      return bad_request("tailLines: expected a number of lines >= 0");
    size_t at = text.size();
    if (!text.empty() && text.back() == '\n') --at;
    long long seen = 0;
    while (at > 0 && seen < n) {
      const size_t nl = text.rfind('\n', at - 1);
      ++seen;
      if (nl == std::string::npos) {
        at = 0;
        break;
      }
      if (seen == n) {
        at = nl + 1;
        break;
      }
      at = nl;
    }
    text = n == 0 ? "" : text.substr(at);
  }
  HttpResponse r;
  r.content_type = "text/plain";
  r.body = std::move(text);
  return r;
}

HttpResponse watch(Api& api, const HttpRequest& req, const Target& t) {
  auto options = watch_options(req, api.clock().now());
  if (!options.ok()) return bad_request(options.status().message());
  options->table = wants_table(req);
  options->include_object = req.query_or("includeObject", "Metadata");
  HttpResponse r;
  r.content_type = "application/json";
  r.stream = make_kube_watch(api, req, t, std::move(*options));
  return r;
}

HttpResponse list(Api& api, const HttpRequest& req, const Target& t) {
  bool watching = false;
  if (auto w = req.query.find("watch"); w != req.query.end()) {
    if (!parse_go_bool(w->second, watching)) return bad_request("watch: expected a boolean");
    if (watching) return watch(api, req, t);
  }
  int64_t limit = 0;
  if (const std::string l = req.query_or("limit", ""); !l.empty()) {
    if (l.find_first_not_of("0123456789") != std::string::npos || l.size() > 9)
      return bad_request("limit: expected a whole number");
    limit = std::atoll(l.c_str());
  }
  Fetched f = list_objects(api, req, t);
  if (f.error) return *f.error;
  auto kept = select(req, *t.kind, std::move(f.items));
  if (!kept.ok()) return bad_request(kept.status().message());
  const std::string after = req.query_or("continue", "");
  std::vector<Json> items;
  std::string next;
  for (Json& o : *kept) {
    if (!after.empty() && item_key(o) <= after) continue;
    if (limit > 0 && static_cast<int64_t>(items.size()) == limit) {
      next = item_key(items.back());
      break;
    }
    items.push_back(std::move(o));
  }
  if (wants_table(req)) {
    HttpResponse r = json_response(200, table(*t.kind, items, api.clock().now(), f.resource_version,
                                              next, req.query_or("includeObject", "Metadata")));
    r.content_type = "application/json;as=Table;v=v1;g=meta.k8s.io";
    return r;
  }
  Json meta{{"resourceVersion", f.resource_version}};
  if (!next.empty()) meta["continue"] = next;
  return json_response(200, Json{{"kind", t.kind->kind + "List"},
                                 {"apiVersion", t.kind->group_version()},
                                 {"metadata", std::move(meta)},
                                 {"items", std::move(items)}});
}

HttpResponse get(Api& api, const HttpRequest& req, const Target& t) {
  if (t.name.empty()) return list(api, req, t);
  if (t.sub == "log") return pod_log(api, req, t);
  Fetched f = get_object(api, req, t);
  if (f.error) return *f.error;
  if (wants_table(req)) {
    HttpResponse r =
        json_response(200, table(*t.kind, f.items, api.clock().now(), f.resource_version, "",
                                 req.query_or("includeObject", "Metadata")));
    r.content_type = "application/json;as=Table;v=v1;g=meta.k8s.io";
    return r;
  }
  return json_response(200, f.items.front());
}

HttpResponse serve(Api& api, const HttpRequest& req) {
  Target t;
  if (auto bad = parse_target(req, t)) return *bad;
  api.door_call(req.method + " " + t.kind->qualified(), req.method != "GET");
  if (req.method == "GET") return get(api, req, t);
  if (req.method == "POST") return create(api, req, t);
  if (req.method == "PUT") return update(api, req, t);
  if (req.method == "PATCH") return patch(api, req, t);
  return remove(api, req, t);
}

}  // namespace

void register_resources(Api& api) {
  Router& r = api.router();
  const std::vector<std::string> prefixes = {"/api/{version}", "/apis/{group}/{version}"};
  for (const std::string& prefix : prefixes) {
    std::string pattern = prefix;
    for (int depth = 1; depth <= 5; ++depth) {
      pattern += "/{s" + std::to_string(depth) + "}";
      for (const char* method : {"GET", "POST", "PUT", "PATCH", "DELETE"}) {
        r.add_door(method, pattern, [&api](const HttpRequest& req) { return serve(api, req); });
      }
    }
  }
}

}  // namespace gf::k8s
