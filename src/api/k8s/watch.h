// The Kubernetes door's watches (docs/kubernetes.md "Watch").
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "api/api.h"
#include "api/http.h"
#include "api/k8s/objects.h"
#include "core/time.h"

namespace gf::k8s {

struct WatchOptions {
  Seq since = 0;           // resourceVersion: send what changed after it (0: every object, ADDED)
  bool bookmarks = false;  // allowWatchBookmarks
  std::optional<Time> deadline{};  // timeoutSeconds on the server's clock
  bool table = false;              // each event's object as a one-row Table (kubectl get -w)
  std::string include_object = "Metadata";
};

// resourceVersion, allowWatchBookmarks and timeoutSeconds; the error names the parameter.
Result<WatchOptions> watch_options(const HttpRequest& req, Time now);

// The event stream of one watch of `t` (its namespace and selectors as `req` names them).
std::shared_ptr<ResponseStream> make_kube_watch(Api& api, const HttpRequest& req, Target t,
                                                WatchOptions options);

}  // namespace gf::k8s
