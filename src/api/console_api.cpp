// GET / and GET /console/{file}: the web console (docs/console.md). Public like /healthz: the
// files hold no fleet data; the page signs in with a token and reads the API as that token.
#include "api/api.h"
#include "console/console_assets.h"

namespace gf {

namespace {

// What a browser may do with the console's page: only its own scripts and styles, only its own
// origin to talk to, never framed (clickjacking on the approve button).
constexpr const char* kContentSecurityPolicy =
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

HttpResponse serve_asset(std::string_view name, const HttpRequest& req) {
  const ConsoleAsset* asset = find_console_asset(name);
  if (!asset) {
    if (!console_built()) {
      return error_response(Status(
          ErrorCode::kNotFound,
          "this gpufleet was built without its web console (CMake found no npm, or "
          "GPUFLEET_CONSOLE=OFF); run scripts/setup and rebuild (docs/console.md). The API and "
          "the CLI work without it"));
    }
    return error_response(
        Status(ErrorCode::kNotFound, "console file \"" + printable(std::string(name), 80) +
                                         "\" not found: the console has index.html, app.js and "
                                         "app.css"));
  }
  HttpResponse r;
  r.headers["ETag"] = std::string(asset->etag);
  r.headers["Cache-Control"] = "no-cache";
  r.headers["X-Content-Type-Options"] = "nosniff";
  r.headers["Referrer-Policy"] = "no-referrer";
  if (name == "index.html") {
    r.headers["Content-Security-Policy"] = kContentSecurityPolicy;
    r.headers["X-Frame-Options"] = "DENY";
  }
  if (req.header_or("if-none-match", "") == asset->etag) {
    r.status = 304;
    r.content_type = "";
    return r;
  }
  r.content_type = std::string(asset->content_type);
  r.body = std::string(asset->body);
  return r;
}

}  // namespace

bool is_console_path(std::string_view path) { return path == "/" || path.starts_with("/console/"); }

void register_console_routes(Api& api) {
  api.router().add("GET", "/",
                   [](const HttpRequest& req) { return serve_asset("index.html", req); });
  api.router().add("GET", "/console/{file}", [](const HttpRequest& req) {
    return serve_asset(req.path_params.at("file"), req);
  });
}

}  // namespace gf
