// `gpufleet token create` (a new bearer token and its auth-file line; the server never sees the
// plain token) and `gpufleet audit` (GET /v1/audit as a table or -o json|yaml). See
// docs/security.md.
#include <CLI/CLI.hpp>

#include <iostream>
#include <memory>

#include "api/auth.h"
#include "cli/app.h"
#include "cli/command_support.h"

namespace gf {

namespace {

struct TokenArgs {
  std::string subject;
  std::vector<std::string> roles;
};

int create_token(const TokenArgs& args) {
  if (normalize_identity(args.subject).empty())
    return usage_error("--subject: required (who the token is for)");
  if (args.roles.empty())
    return usage_error("--role: at least one (admin, operator, viewer, agent, team:<name>)");
  for (const std::string& r : args.roles) {
    if (std::string why = role_error(r); !why.empty())
      return usage_error("--role " + r + ": " + why);
  }
  const std::string token = new_token();
  if (token.empty())
    return print_error(internal_error("the system's random source failed; no token made"));
  std::string roles;
  for (const std::string& r : args.roles) roles += (roles.empty() ? "" : ", ") + Json(r).dump();
  std::cout << "token (give it to " << args.subject << "; it is shown only once):\n  " << token
            << "\n\n"
            << "add to the --auth-file under tokens:\n"
            << "  - sha256: " << sha256_hex(token) << "\n"
            << "    subject: " << Json(args.subject).dump() << "\n"
            << "    roles: [" << roles << "]\n";
  return 0;
}

struct AuditArgs {
  std::string since;
  std::string identity;
  std::string resource;
  int limit = 1000;
};

int list_audit(CommandEnv& env, const AuditArgs& args) {
  QueryString q;
  q.add("since", args.since)
      .add("identity", args.identity)
      .add("resource", args.resource)
      .add("limit", std::to_string(args.limit));
  auto answer = env.client.get("/v1/audit" + q.str());
  if (!answer.ok()) return print_error(answer.status());
  if (print_if_structured(env, *answer)) return 0;
  Table table({"TIME", "IDENTITY", "METHOD", "PATH", "CODE", "ERROR", "COUNT", "REQUEST"});
  for (const Json& a : array_field(*answer, "AuditRecords")) {
    // A caller no token vouched for is shown by its address (docs/security.md).
    const std::string source = text_field(a, "Source");
    table.add_row({text_field(a, "Time"),
                   source.empty() ? text_field(a, "Identity") : "address " + source,
                   text_field(a, "Method"), text_field(a, "Path"), text_field(a, "Code"),
                   text_field(a, "Error"), std::to_string(a.value("Count", int64_t{1})),
                   text_field(a, "RequestId")});
  }
  table.print(std::cout);
  return 0;
}

}  // namespace

void register_security_commands(CLI::App& app, CommandContext& ctx) {
  auto* token = app.add_subcommand("token", "make bearer tokens for serve --auth-file");
  token->require_subcommand(1);
  auto targs = std::make_shared<TokenArgs>();
  auto* create =
      token->add_subcommand("create", "print a new token and the auth-file entry that grants it");
  create
      ->add_option("--subject", targs->subject,
                   "who the token is for (the identity in audit records)")
      ->required();
  create
      ->add_option("--role", targs->roles,
                   "admin, operator, viewer, agent or team:<name> (repeatable)")
      ->required();
  create->callback([&ctx, targs] { ctx.run = [targs] { return create_token(*targs); }; });

  auto aargs = std::make_shared<AuditArgs>();
  auto* audit = app.add_subcommand(
      "audit", "list audited API calls (who did what, and the answer), oldest first");
  audit->add_option("--since", aargs->since,
                    "only calls after a duration ago by the server's clock (1h) or a time");
  audit->add_option("--identity", aargs->identity, "only this caller");
  audit->add_option("--resource", aargs->resource,
                    "only resources starting with this (clusters/training)");
  audit->add_option("--limit", aargs->limit, "the newest N matches (1-10000)")
      ->capture_default_str();
  run_with_client(audit, ctx, [aargs](CommandEnv& env) { return list_audit(env, *aargs); });
}

}  // namespace gf
