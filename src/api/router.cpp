#include "api/router.h"

#include <set>

namespace gf {

std::vector<std::string> Router::split(const std::string& path) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < path.size()) {
    size_t j = path.find('/', i);
    if (j == std::string::npos) j = path.size();
    if (j > i) out.push_back(path.substr(i, j - i));
    i = j + 1;
  }
  return out;
}

void Router::add(const std::string& method, const std::string& pattern, Handler handler) {
  routes_.push_back(Route{method, pattern, split(pattern), std::move(handler)});
}

void Router::add_door(const std::string& method, const std::string& pattern, Handler handler) {
  routes_.push_back(Route{method, pattern, split(pattern), std::move(handler), true});
}

bool Router::match(const Route& route, const std::vector<std::string>& segments,
                   std::map<std::string, std::string>& params) {
  if (route.segments.size() != segments.size()) return false;
  std::map<std::string, std::string> found;
  for (size_t i = 0; i < segments.size(); ++i) {
    const std::string& want = route.segments[i];
    if (want.size() > 2 && want.front() == '{' && want.back() == '}') {
      found[want.substr(1, want.size() - 2)] = segments[i];
    } else if (want != segments[i]) {
      return false;
    }
  }
  params = std::move(found);
  return true;
}

namespace {

// "/" alone or segments separated by single slashes, no trailing one.
bool well_formed_path(const std::string& path) {
  if (path.empty() || path.front() != '/') return false;
  if (path == "/") return true;
  return path.back() != '/' && path.find("//") == std::string::npos;
}

}  // namespace

HttpResponse Router::dispatch(HttpRequest request) const {
  const auto segments = split(request.path);
  std::set<std::string> allowed;
  for (const Route& route : routes_) {
    if (!well_formed_path(request.path)) break;
    std::map<std::string, std::string> params;
    if (!match(route, segments, params)) continue;
    if (route.method != request.method) {
      allowed.insert(route.method);
      continue;
    }
    request.path_params = std::move(params);
    const std::string name = route.method + " " + route.pattern;
    if (authorizer_ && !route.door) {
      if (Status st = authorizer_(name, request); !st.ok()) {
        HttpResponse r = error_response(st);
        r.route = name;
        return r;
      }
    }
    HttpResponse r = route.handler(request);
    r.route = route.method + " " + route.pattern;
    return r;
  }
  HttpResponse r;
  if (!allowed.empty()) {
    std::string list;
    for (const auto& m : allowed) list += (list.empty() ? "" : ", ") + m;
    r = error_response(
        Status(ErrorCode::kMethodNotAllowed, "method " + request.method + " is not allowed on " +
                                                 printable(request.path) + "; allowed: " + list));
  } else {
    r = error_response(
        not_found_error("no such resource: " + request.method + " " + printable(request.path)));
  }
  r.route = "unmatched";
  return r;
}

}  // namespace gf
