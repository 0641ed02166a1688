#include "api/door.h"

namespace gf::door {

Answer call(Api& api, const HttpRequest& outer, Inner inner) {
  if (auto dry = outer.query.find("dryRun"); dry != outer.query.end())
    inner.query["dryRun"] = dry->second;
  HttpRequest r;
  r.method = std::move(inner.method);
  r.path = std::move(inner.path);
  r.query = std::move(inner.query);
  r.headers = outer.headers;
  if (inner.body) r.body = safe_dump(*inner.body);
  const bool text = inner.text;
  r.caller = outer.caller;
  r.roles = outer.roles;
  r.peer = outer.peer;
  r.request_id = outer.request_id;
  Answer a;
  a.response = api.dispatch_inner(std::move(r));
  if (a.ok() && !text) {
    auto parsed = parse_json(a.response.body);
    if (parsed.ok()) {
      a.body = std::move(parsed).value();
    } else {
      a.response = error_response(internal_error("the answer of " + a.response.route +
                                                 " is not JSON: " + parsed.status().message()));
    }
  }
  return a;
}

}  // namespace gf::door
