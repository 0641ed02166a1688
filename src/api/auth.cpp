#include "api/auth.h"

#include <openssl/evp.h>
#include <openssl/rand.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <set>
#include <sstream>

#include "state/fleet_state.h"

namespace gf {

std::string hex_lower(std::string_view bytes) {
  static const char* kHex = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    out += kHex[c >> 4];
    out += kHex[c & 0xF];
  }
  return out;
}

std::string sha256_hex(std::string_view data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(data.data(), data.size(), digest, &len, EVP_sha256(), nullptr);
  return hex_lower(std::string_view(reinterpret_cast<const char*>(digest), len));
}

std::string new_token() {
  unsigned char raw[32];
  if (RAND_bytes(raw, sizeof(raw)) != 1) return "";
  static const char* kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::string out = "gf_";
  // 32 bytes → 43 base64url characters (6 bits each; the last holds 4).
  uint32_t acc = 0;
  int bits = 0;
  for (unsigned char b : raw) {
    acc = (acc << 8) | b;
    bits += 8;
    while (bits >= 6) {
      out += kAlphabet[(acc >> (bits - 6)) & 0x3F];
      bits -= 6;
    }
  }
  if (bits > 0) out += kAlphabet[(acc << (6 - bits)) & 0x3F];
  return out;
}

std::string role_error(std::string_view role) {
  if (role == "admin" || role == "operator" || role == "viewer" || role == "agent") return "";
  if (role.rfind("team:", 0) == 0) {
    const std::string_view name = role.substr(5);
    const bool ok = !name.empty() && name.size() <= 128 &&
                    std::all_of(name.begin(), name.end(), [](unsigned char c) {
                      return std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '/';
                    });
    if (ok) return "";
    return "a team role is team:<name> with a quota share, ClusterQueue or namespace name";
  }
  return "unknown role (admin, operator, viewer, agent or team:<name>)";
}

std::string normalize_identity(std::string_view name) {
  size_t b = 0, e = name.size();
  while (b < e && std::isspace(static_cast<unsigned char>(name[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(name[e - 1]))) --e;
  std::string out(name.substr(b, e - b));
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

namespace {

// A subject and its roles, as both kinds of entry carry them.
Status check_subject_and_roles(const std::string& path, const std::string& subject,
                               const std::vector<std::string>& roles) {
  if (normalize_identity(subject).empty() || subject.size() > 256)
    return validation_error(path + ".subject: must be 1-256 characters");
  if (roles.empty()) return validation_error(path + ".roles: at least one role is required");
  for (size_t k = 0; k < roles.size(); ++k) {
    if (std::string why = role_error(roles[k]); !why.empty()) {
      return validation_error(path_index(path + ".roles", k) + ": '" + printable(roles[k], 80) +
                              "': " + why);
    }
  }
  return ok_status();
}

Result<TokenEntry> parse_token(const Json& entry, const std::string& path) {
  ObjectReader t(entry, path);
  TokenEntry e;
  e.sha256 = normalize_identity(t.required_string("sha256"));
  e.subject = t.required_string("subject");
  e.roles = t.optional_string_list("roles").value_or(std::vector<std::string>{});
  for (const std::string& f : t.unknown_fields())
    t.fail_status(validation_error(f + ": unknown field (expected sha256, subject, roles)"));
  if (!t.ok()) return t.status();
  if (e.sha256.size() != 64 ||
      e.sha256.find_first_not_of("0123456789abcdef") != std::string::npos) {
    return validation_error(path +
                            ".sha256: expected the 64 hex digits of the token's SHA-256 "
                            "(gpufleet token create prints it)");
  }
  GF_RETURN_IF_ERROR(check_subject_and_roles(path, e.subject, e.roles));
  return e;
}

Result<AccessKeyEntry> parse_access_key(const Json& entry, const std::string& path) {
  ObjectReader t(entry, path);
  AccessKeyEntry e;
  e.access_key_id = t.required_string("accessKeyId");
  e.secret_access_key = t.required_string("secretAccessKey");
  e.subject = t.required_string("subject");
  e.roles = t.optional_string_list("roles").value_or(std::vector<std::string>{});
  for (const std::string& f : t.unknown_fields())
    t.fail_status(validation_error(
        f + ": unknown field (expected accessKeyId, secretAccessKey, subject, roles)"));
  if (!t.ok()) return t.status();
  const bool id_ok = e.access_key_id.size() >= 3 && e.access_key_id.size() <= 128 &&
                     std::all_of(e.access_key_id.begin(), e.access_key_id.end(),
                                 [](unsigned char c) { return std::isalnum(c) != 0; });
  if (!id_ok)
    return validation_error(path + ".accessKeyId: expected 3-128 letters and digits (AKIA...)");
  if (e.secret_access_key.size() < 16 || e.secret_access_key.size() > 256)
    return validation_error(path + ".secretAccessKey: expected 16-256 characters");
  GF_RETURN_IF_ERROR(check_subject_and_roles(path, e.subject, e.roles));
  return e;
}

}  // namespace

Result<TokenStore> TokenStore::parse(std::string_view yaml_text) {
  GF_ASSIGN_OR_RETURN(Json doc, parse_yaml(yaml_text));
  ObjectReader r(doc, "");
  const Json* tokens = r.optional_array("tokens");
  const Json* keys = r.optional_array("accessKeys");
  for (const std::string& f : r.unknown_fields())
    r.fail_status(validation_error(f + ": unknown field (expected tokens, accessKeys)"));
  if (!r.ok()) return r.status();
  if ((!tokens || tokens->empty()) && (!keys || keys->empty()))
    return validation_error("tokens: at least one token (or one of accessKeys) is required");
  TokenStore store;
  for (size_t i = 0; tokens && i < tokens->size(); ++i) {
    const std::string path = path_index("tokens", i);
    GF_ASSIGN_OR_RETURN(TokenEntry e, parse_token((*tokens)[i], path));
    if (store.by_hash_.contains(e.sha256))
      return validation_error(path + ".sha256: the same token is listed twice");
    store.by_hash_.emplace(e.sha256, std::move(e));
  }
  for (size_t i = 0; keys && i < keys->size(); ++i) {
    const std::string path = path_index("accessKeys", i);
    GF_ASSIGN_OR_RETURN(AccessKeyEntry e, parse_access_key((*keys)[i], path));
    if (store.access_keys_.contains(e.access_key_id))
      return validation_error(path + ".accessKeyId: " + e.access_key_id + " is listed twice");
    store.access_keys_.emplace(e.access_key_id, std::move(e));
  }
  return store;
}

Result<TokenStore> TokenStore::load_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) return validation_error("--auth-file: cannot read " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  auto store = parse(ss.str());
  if (!store.ok()) return store.status().with_prefix("--auth-file " + path);
  return store;
}

const AccessKeyEntry* TokenStore::find_access_key(std::string_view id) const {
  auto it = access_keys_.find(id);
  return it == access_keys_.end() ? nullptr : &it->second;
}

const TokenEntry* TokenStore::find(std::string_view token) const {
  if (token.empty()) return nullptr;
  auto it = by_hash_.find(sha256_hex(token));
  return it == by_hash_.end() ? nullptr : &it->second;
}

Permission required_permission(std::string_view method, std::string_view route) {
  // /metrics holds counts, never fleet data; scrapers carry no token (docs/security.md).
  if (route == "GET /healthz" || route == "GET /metrics" || route == "GET /" ||
      route == "GET /console/{file}" || route == "GET /v1/whoami")
    return Permission::kPublic;
  const bool read = method == "GET" || method == "HEAD";
  auto under = [&](std::string_view prefix) {
    const std::string_view pattern = route.substr(route.find(' ') + 1);
    return pattern.rfind(prefix, 0) == 0;
  };
  if (read) {
    if (under("/v1/audit") || under("/v1/debug"))
      return under("/v1/debug") ? Permission::kAdmin : Permission::kAudit;
    // The pods a node should run, with every job's environment: its agent asks, and operators.
    if (route.ends_with("/nodes/{id}/pods")) return Permission::kAgentRead;
    return Permission::kRead;
  }
  if (route.ends_with("/nodes/{id}/signals") || route.ends_with("/nodes/{id}/signals/clear") ||
      route.ends_with("/nodes/{id}/heartbeat") || route.ends_with("/nodes/{id}/agent/status") ||
      route.ends_with("/nodes/{id}/pods/{pod}/status") || route.ends_with("/nodes/{id}/slurm")) {
    return Permission::kAgent;
  }
  if (under("/v1/service-jobs") || under("/v1/apply") || under("/v1/objects") ||
      under("/v1/namespaces")) {
    return Permission::kTeamWork;
  }
  if (under("/v1/clusters") || under("/v1/remediations") || under("/v1/circuit-breakers")) {
    return Permission::kOperate;
  }
  return Permission::kAdmin;
}

bool has_role(const HttpRequest& request, std::string_view role) {
  return std::find(request.roles.begin(), request.roles.end(), role) != request.roles.end();
}

HttpRequest caller_of(const HttpRequest& request) {
  HttpRequest who;
  who.caller = request.caller;
  who.roles = request.roles;
  return who;
}

std::vector<std::string> team_names(const HttpRequest& request) {
  std::vector<std::string> out;
  for (const std::string& r : request.roles) {
    if (r.rfind("team:", 0) == 0) out.push_back(r.substr(5));
  }
  return out;
}

Status authorize(const HttpRequest& request, Permission need) {
  if (need == Permission::kPublic || has_role(request, "admin")) return ok_status();
  const bool op = has_role(request, "operator"), viewer = has_role(request, "viewer");
  const bool team = !team_names(request).empty();
  bool ok = false;
  std::string wanted;
  switch (need) {
    case Permission::kPublic:
      ok = true;
      break;
    case Permission::kRead:
      ok = op || viewer || team;
      wanted = "viewer";
      break;
    case Permission::kAudit:
      ok = op || viewer;
      wanted = "viewer";
      break;
    case Permission::kOperate:
      ok = op;
      wanted = "operator";
      break;
    case Permission::kAgent:
      ok = op || has_role(request, "agent");
      wanted = "agent";
      break;
    case Permission::kAgentRead:
      ok = op || has_role(request, "agent");
      wanted = "agent";
      break;
    case Permission::kTeamWork:
      ok = team;
      wanted = "team:<name>";
      break;
    case Permission::kAdmin:
      wanted = "admin";
      break;
  }
  if (ok) return ok_status();
  std::string have;
  for (const std::string& r : request.roles) have += (have.empty() ? "" : ", ") + r;
  return Status(ErrorCode::kForbidden, request.method + " " + request.path + " needs the " +
                                           wanted + " role (or admin); " + request.caller +
                                           " has " + (have.empty() ? "no role" : have));
}

std::vector<std::string> job_team_keys(const FleetView& view, const Job& job) {
  std::vector<std::string> keys;
  if (!job.quota_share.empty()) keys.push_back(job.quota_share);
  if (!job.local_queue.empty()) {
    keys.push_back(job.local_queue);
    if (view.quota_objects) {
      auto it = view.quota_objects->find(
          frontend::ObjectKey{frontend::Kind::kLocalQueue, job.ns, job.local_queue});
      if (it != view.quota_objects->end() && it->second.doc.contains("spec") &&
          it->second.doc["spec"].is_object()) {
        const Json& spec = it->second.doc["spec"];
        if (spec.contains("clusterQueue") && spec["clusterQueue"].is_string())
          keys.push_back(spec["clusterQueue"].get<std::string>());
      }
    }
  }
  if (!job.ns.empty()) keys.push_back(job.ns);
  return keys;
}

namespace {

bool filed_under_team(const HttpRequest& request, const FleetView& view, const Job& job) {
  const std::vector<std::string> teams = team_names(request);
  if (teams.empty()) return false;
  for (const std::string& k : job_team_keys(view, job)) {
    if (std::find(teams.begin(), teams.end(), k) != teams.end()) return true;
  }
  return false;
}

}  // namespace

bool team_covers_namespace(const HttpRequest& request, const std::string& ns) {
  const std::vector<std::string> teams = team_names(request);
  return std::find(teams.begin(), teams.end(), ns) != teams.end();
}

bool sees_every_job(const HttpRequest& request) {
  return has_role(request, "admin") || has_role(request, "operator") || has_role(request, "viewer");
}

bool may_see_namespace(const HttpRequest& request, const std::string& ns) {
  return sees_every_job(request) || team_covers_namespace(request, ns);
}

bool may_see_job(const HttpRequest& request, const FleetView& view, const Job& job) {
  return sees_every_job(request) || filed_under_team(request, view, job);
}

bool may_see_event(const HttpRequest& request, const FleetView& view, const UserEvent& event) {
  if (event.resource_type != "Job" || has_role(request, "admin") || has_role(request, "operator") ||
      has_role(request, "viewer")) {
    return true;  // no job lookup for a caller who sees every job
  }
  const auto id = event.details.find("JobId");
  if (id == event.details.end() || !id->is_string()) return true;
  const Job* job = view.job(id->get_ref<const std::string&>());
  return job == nullptr || may_see_job(request, view, *job);
}

bool may_change_job(const HttpRequest& request, const FleetView& view, const Job& job) {
  return has_role(request, "admin") || filed_under_team(request, view, job);
}

}  // namespace gf
