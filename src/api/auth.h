// Who is calling and what they may do (see docs/security.md).
//
// Authentication: with an auth file, every request needs `Authorization: Bearer <token>`; the file
// keeps only SHA-256 hashes of tokens, each with a subject and roles. Without one, the server
// listens on loopback only and the caller is whoever `X-Gpufleet-User` names, with every role.
//
// Roles: admin (everything), operator (clusters, nodes, policies, remediation decisions, circuit
// breakers), viewer (read everything), agent (a node agent: signals and heartbeats only), and
// team:<name> (submit, see, change and cancel the jobs of its own quota share, ClusterQueue or
// namespace; other teams' jobs are invisible; quota objects readable).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/http.h"
#include "core/result.h"

namespace gf {

struct FleetView;
struct Job;
struct UserEvent;

struct TokenEntry {
  std::string sha256;  // lower-case hex of the token's SHA-256
  std::string subject;
  std::vector<std::string> roles;
};

// An AWS access key (docs/aws-compatibility.md "Signatures"): requests signed with Signature V4
// under this key id are verified with its secret and run as its subject, with its roles.
struct AccessKeyEntry {
  std::string access_key_id;
  std::string secret_access_key;
  std::string subject;
  std::vector<std::string> roles;
};

class TokenStore {
 public:
  // The auth file: `tokens: [{sha256: <64 hex>, subject: alice, roles: [admin]}]` and/or
  // `accessKeys: [{accessKeyId, secretAccessKey, subject, roles}]`. Errors name the entry and
  // field.
  static Result<TokenStore> parse(std::string_view yaml_text);
  static Result<TokenStore> load_file(const std::string& path);

  // The entry whose hash matches `token`, or null.
  const TokenEntry* find(std::string_view token) const;
  // The access key with this id, or null.
  const AccessKeyEntry* find_access_key(std::string_view access_key_id) const;
  // One more token (the local cloud's agents' own, which serve makes).
  void add(TokenEntry entry) { by_hash_[entry.sha256] = std::move(entry); }
  size_t size() const { return by_hash_.size(); }
  size_t access_key_count() const { return access_keys_.size(); }

 private:
  std::map<std::string, TokenEntry, std::less<>> by_hash_;
  std::map<std::string, AccessKeyEntry, std::less<>> access_keys_;
};

// `bytes` as lower-case hex, two digits a byte.
std::string hex_lower(std::string_view bytes);
// Lower-case hex SHA-256 of `data` (OpenSSL).
std::string sha256_hex(std::string_view data);
// A new random token (32 bytes from OpenSSL's CSPRNG, as "gf_" + base64url).
std::string new_token();
// "" when `role` is admin, operator, viewer, agent or team:<name>; else why not.
std::string role_error(std::string_view role);
// The form identities compare in: trimmed, ASCII lower-case (so "Alice" is "alice").
std::string normalize_identity(std::string_view name);

// What a route needs.
enum class Permission {
  kPublic,     // /healthz: anyone, even unauthenticated
  kRead,       // any role except agent
  kAudit,      // reading the audit log: admin, operator, viewer
  kOperate,    // clusters, nodes, policies, remediation decisions: admin, operator
  kAgent,      // node signals, heartbeats, agent and pod status: admin, operator, agent
  kAgentRead,  // the pods a node should run (every job's environment): agent and operators
  kTeamWork,   // jobs: admin or a team role (the handler checks which jobs)
  kAdmin,      // everything else that changes state
};

Permission required_permission(std::string_view method, std::string_view route_pattern);
// OK, or a 403 AccessDeniedException naming the role that is missing.
Status authorize(const HttpRequest& request, Permission need);

bool has_role(const HttpRequest& request, std::string_view role);
// Only who is calling (caller, roles): what a loop request keeps to check job access later,
// without a copy of the body.
HttpRequest caller_of(const HttpRequest& request);
// The team roles' names of the caller ("team:ml" → "ml").
std::vector<std::string> team_names(const HttpRequest& request);
// The names a job is filed under for team roles: its quota share, its ClusterQueue (through its
// LocalQueue), its LocalQueue and its namespace.
std::vector<std::string> job_team_keys(const FleetView& view, const Job& job);
// Whether the caller may see and change this job: admin, operator and viewer see every job (only
// admin changes them); a team role only the jobs filed under its name.
bool may_see_job(const HttpRequest& request, const FleetView& view, const Job& job);
// A job's events as its job (a team-only caller sees its own jobs' only); every other event.
bool may_see_event(const HttpRequest& request, const FleetView& view, const UserEvent& event);
bool may_change_job(const HttpRequest& request, const FleetView& view, const Job& job);
// Whether a team role of the caller is named after this namespace.
bool team_covers_namespace(const HttpRequest& request, const std::string& ns);
// Admin, operator and viewer see every job; a team-only caller those filed under its teams.
bool sees_every_job(const HttpRequest& request);
// Whether the caller may see what lives in namespace `ns` that selects or names jobs
// (PropagationPolicies): admin, operator and viewer every namespace, a team role its own.
bool may_see_namespace(const HttpRequest& request, const std::string& ns);

}  // namespace gf
