#include "core/result.h"

#include <spdlog/spdlog.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>

namespace gf {

namespace {
std::atomic<uint64_t> g_check_failures{0};
}  // namespace

void check_ok_failed(const Status& status, const char* expr, const char* file, int line) {
  g_check_failures.fetch_add(1, std::memory_order_relaxed);
  spdlog::error("internal check failed at {}:{}: {} returned {}: {}", file, line, expr,
                error_type_name(status.code()), status.message());
#ifndef NDEBUG
  // The log may go to stdout; the reason for the abort belongs on stderr.
  std::fprintf(stderr, "internal check failed at %s:%d: %s: %s\n", file, line, expr,
               status.message().c_str());
  std::abort();
#endif
}

uint64_t check_ok_failures() { return g_check_failures.load(std::memory_order_relaxed); }

std::string_view error_type_name(ErrorCode code) {
  switch (code) {
    case ErrorCode::kOk:
      return "Ok";
    case ErrorCode::kValidation:
      return "ValidationException";
    case ErrorCode::kNotFound:
      return "ResourceNotFound";
    case ErrorCode::kConflict:
      return "ConflictException";
    case ErrorCode::kResourceInUse:
      return "ResourceInUse";
    case ErrorCode::kThrottling:
      return "ThrottlingException";
    case ErrorCode::kUnauthenticated:
      return "UnauthorizedException";
    case ErrorCode::kForbidden:
      return "AccessDeniedException";
    case ErrorCode::kInvalidSignature:
      return "InvalidSignatureException";
    case ErrorCode::kUnrecognizedClient:
      return "UnrecognizedClientException";
    case ErrorCode::kIncompleteSignature:
      return "IncompleteSignatureException";
    case ErrorCode::kMethodNotAllowed:
      return "MethodNotAllowedException";
    case ErrorCode::kPayloadTooLarge:
      return "PayloadTooLargeException";
    case ErrorCode::kNotImplemented:
      return "NotImplementedException";
    case ErrorCode::kUnavailable:
      return "ServiceUnavailableException";
    case ErrorCode::kInternal:
      return "InternalFailure";
  }
  return "InternalFailure";
}

int http_status(ErrorCode code) {
  switch (code) {
    case ErrorCode::kOk:
      return 200;
    case ErrorCode::kValidation:
      return 400;
    case ErrorCode::kNotFound:
      return 404;
    case ErrorCode::kConflict:
      return 409;
    case ErrorCode::kResourceInUse:
      return 409;
    case ErrorCode::kThrottling:
      return 429;
    case ErrorCode::kUnauthenticated:
      return 401;
    case ErrorCode::kForbidden:
    case ErrorCode::kInvalidSignature:
    case ErrorCode::kUnrecognizedClient:
      return 403;
    case ErrorCode::kIncompleteSignature:
      return 400;
    case ErrorCode::kMethodNotAllowed:
      return 405;
    case ErrorCode::kPayloadTooLarge:
      return 413;
    case ErrorCode::kNotImplemented:
      return 501;
    case ErrorCode::kUnavailable:
      return 503;
    case ErrorCode::kInternal:
      return 500;
  }
  return 500;
}

std::string Status::to_string() const {
  if (ok()) return "OK";
  return std::string(error_type_name(code_)) + ": " + message_;
}

Status Status::with_prefix(std::string_view prefix) const {
  if (ok() || prefix.empty()) return *this;
  return Status(code_, std::string(prefix) + ": " + message_);
}

}  // namespace gf
