// Errors as values: one small Status / Result<T> used everywhere in gpufleet.
// No exceptions cross a module boundary; third-party exceptions are caught at the call site and
// turned into a Status whose message names the field and the fix.
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace gf {

// The codes map one to one onto the wire error types of docs/api.md
enum class ErrorCode {
  kOk = 0,
  kValidation,           // 400 ValidationException
  kNotFound,             // 404 ResourceNotFound
  kConflict,             // 409 ConflictException
  kResourceInUse,        // 409 ResourceInUse
  kThrottling,           // 429 ThrottlingException
  kUnauthenticated,      // 401 UnauthorizedException
  kForbidden,            // 403 AccessDeniedException
  kInvalidSignature,     // 403 InvalidSignatureException (an AWS Signature V4 that does not verify)
  kUnrecognizedClient,   // 403 UnrecognizedClientException (an unknown AWS access key id)
  kIncompleteSignature,  // 400 IncompleteSignatureException (a malformed SigV4 Authorization)
  kMethodNotAllowed,     // 405 MethodNotAllowedException
  kPayloadTooLarge,      // 413 PayloadTooLargeException
  kNotImplemented,       // 501 NotImplementedException
  kUnavailable,          // 503 ServiceUnavailableException
  kInternal,             // 500 InternalFailure
};

std::string_view error_type_name(ErrorCode code);  // wire name, e.g. "ValidationException"
int http_status(ErrorCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(ErrorCode code, std::string message) : code_(code), message_(std::move(message)) {}

  bool ok() const { return code_ == ErrorCode::kOk; }
  ErrorCode code() const { return code_; }
  const std::string& message() const { return message_; }
  std::string to_string() const;

  // Returns a copy whose message is "prefix: message" (used to add a field path); an empty
  // prefix leaves it as it is.
  Status with_prefix(std::string_view prefix) const;

 private:
  ErrorCode code_ = ErrorCode::kOk;
  std::string message_;
};

inline Status ok_status() { return Status(); }
inline Status validation_error(std::string m) { return {ErrorCode::kValidation, std::move(m)}; }
inline Status not_found_error(std::string m) { return {ErrorCode::kNotFound, std::move(m)}; }
inline Status conflict_error(std::string m) { return {ErrorCode::kConflict, std::move(m)}; }
inline Status internal_error(std::string m) { return {ErrorCode::kInternal, std::move(m)}; }
inline Status unavailable_error(std::string m) { return {ErrorCode::kUnavailable, std::move(m)}; }

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}        // NOLINT(google-explicit-constructor)
  Result(Status status) : v_(std::move(status)) {  // NOLINT(google-explicit-constructor)
    assert(!std::get<Status>(v_).ok() && "a Result built from a Status must carry an error");
  }

  bool ok() const { return std::holds_alternative<T>(v_); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(v_);
  }
  T& value() & {
    assert(ok());
    return std::get<T>(v_);
  }
  const T& value() const& {
    assert(ok());
    return std::get<T>(v_);
  }
  T&& value() && {
    assert(ok());
    return std::get<T>(std::move(v_));
  }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<T, Status> v_;
};

// GF_CHECK_OK's report of a Status that should not have failed. Debug builds (the ASan suite)
// abort so the test that reached it fails; release builds log it, count it and go on
// (docs/style.md, "Errors").
void check_ok_failed(const Status& status, const char* expr, const char* file, int line);
// GF_CHECK_OK failures in this process; /metrics exports it as
// gpufleet_internal_check_failures_total.
uint64_t check_ok_failures();

}  // namespace gf

// For a Status that fails only if the code is wrong (an invariant, never input): checked, and
// reported by check_ok_failed when it is not OK.
#define GF_CHECK_OK(expr)                                                 \
  do {                                                                    \
    const ::gf::Status gf_check_status_ = (expr);                         \
    if (!gf_check_status_.ok()) {                                         \
      ::gf::check_ok_failed(gf_check_status_, #expr, __FILE__, __LINE__); \
    }                                                                     \
  } while (0)

// Propagates an error Status from an expression returning Status.
#define GF_RETURN_IF_ERROR(expr)             \
  do {                                       \
    ::gf::Status gf_status_ = (expr);        \
    if (!gf_status_.ok()) return gf_status_; \
  } while (0)

#define GF_CONCAT_INNER(a, b) a##b
#define GF_CONCAT(a, b) GF_CONCAT_INNER(a, b)
// `GF_ASSIGN_OR_RETURN(auto x, make_x());`
#define GF_ASSIGN_OR_RETURN(lhs, expr) \
  GF_ASSIGN_OR_RETURN_IMPL(GF_CONCAT(gf_result_, __LINE__), lhs, expr)
#define GF_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                             \
  if (!tmp.ok()) return tmp.status();            \
  lhs = std::move(tmp).value()
