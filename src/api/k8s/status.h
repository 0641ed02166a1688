// Every failure the Kubernetes door answers is a `kind: Status` object (docs/kubernetes.md
// "Errors"): kubectl prints its `reason` and `message` and drops any other body.
#pragma once

#include <string>

#include "api/http.h"
#include "api/k8s/registry.h"
#include "core/json.h"

namespace gf::k8s {

// The object a request is about, for the wording of its errors.
struct Subject {
  const KindInfo* kind = nullptr;
  std::string name{};
  bool write = false;  // a create, update or patch: field errors are 422 Invalid
};

// A Status answer with HTTP status `code`.
HttpResponse status_response(int code, const std::string& reason, const std::string& message,
                             Json details = Json::object());

// gpufleet's error answer ({"__type", "message"}, docs/api.md) as the Status Kubernetes clients
// read: 400 BadRequest (or, on a write, 422 Invalid with the field the message names first as a
// cause), 401 Unauthorized, 403 Forbidden, 404 NotFound, 405 MethodNotAllowed, 409 Conflict or
// AlreadyExists, 413 RequestEntityTooLarge, 429 TooManyRequests, 500 InternalError, 503
// ServiceUnavailable. Headers (Retry-After) are kept. A success or a Status already is unchanged.
void to_status(HttpResponse& r, const Subject& subject = {});

// `status: Success` (what a delete answers).
Json success_status(const Subject& subject);

}  // namespace gf::k8s
