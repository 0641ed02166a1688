// Routes "METHOD /v1/clusters/{name}/nodes/{id}" to handlers. Unknown paths answer 404
// ResourceNotFound; a known path with another method answers 405 listing the allowed ones.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "api/http.h"

namespace gf {

using Handler = std::function<HttpResponse(const HttpRequest&)>;
// Called with "METHOD /pattern" once a route matched, before its handler; an error is answered
// instead of running the handler.
using Authorizer = std::function<Status(const std::string& route, const HttpRequest&)>;

class Router {
 public:
  void add(const std::string& method, const std::string& pattern, Handler handler);
  // A door: a route that is not authorized itself because its handler only turns the request
  // into another route's and dispatches that (the AWS protocols, src/api/aws/), which is.
  void add_door(const std::string& method, const std::string& pattern, Handler handler);
  // A path with an empty segment (`//x`, a trailing `/`) matches nothing: 404.
  HttpResponse dispatch(HttpRequest request) const;
  void set_authorizer(Authorizer a) { authorizer_ = std::move(a); }
  // Every route as (method, pattern), in the order added: what a test walks to check a rule
  // on all of them (docs/security.md "Who sees a job").
  std::vector<std::pair<std::string, std::string>> patterns() const {
    std::vector<std::pair<std::string, std::string>> out;
    for (const Route& r : routes_) out.emplace_back(r.method, r.pattern);
    return out;
  }

 private:
  struct Route {
    std::string method;
    std::string pattern;
    std::vector<std::string> segments;
    Handler handler;
    bool door = false;
  };
  static std::vector<std::string> split(const std::string& path);
  static bool match(const Route& route, const std::vector<std::string>& segments,
                    std::map<std::string, std::string>& params);

  std::vector<Route> routes_;
  Authorizer authorizer_;
};

}  // namespace gf
