// AWS Signature Version 4, the server's side (see docs/aws-compatibility.md "Signatures"): the
// Authorization header parsed, the canonical request rebuilt from what arrived, and the
// signature checked against the caller's secret. Pure: time is a parameter.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "api/http.h"
#include "core/result.h"
#include "core/time.h"

namespace gf::sigv4 {

inline constexpr std::string_view kAlgorithm = "AWS4-HMAC-SHA256";
// How far `x-amz-date` may be from the server's clock, either way (AWS's own limit).
inline constexpr Duration kMaxSkew = std::chrono::minutes(15);

// `Authorization: AWS4-HMAC-SHA256 Credential=AKID/20150830/us-east-1/service/aws4_request,
// SignedHeaders=host;x-amz-date, Signature=<64 hex>`.
struct Authorization {
  std::string access_key_id;
  std::string date;  // YYYYMMDD of the credential scope
  std::string region;
  std::string service;
  std::vector<std::string> signed_headers;  // lower-case, as listed
  std::string signature;                    // lower-case hex
  std::string scope() const { return date + "/" + region + "/" + service + "/aws4_request"; }
};

// Whether the header names this scheme (then parse() decides whether it is well formed).
bool is_sigv4(std::string_view authorization_header);
// An IncompleteSignatureException naming what is missing or malformed.
Result<Authorization> parse(std::string_view authorization_header);

// `x-amz-date` (or `date`) as a time: YYYYMMDD'T'HHMMSS'Z'.
Result<Time> parse_amz_date(std::string_view text);

// The canonical request of `request` over `signed_headers`: method, URI, query, headers, the
// signed header list and the hex SHA-256 of the body. The path and query are as the server
// decoded them, encoded again the way SigV4 prescribes.
std::string canonical_request(const HttpRequest& request,
                              const std::vector<std::string>& signed_headers);
std::string string_to_sign(std::string_view amz_date, std::string_view scope,
                           std::string_view canonical_request);
// Hex HMAC-SHA256 of `string_to_sign` under the key derived from the secret and the scope.
std::string sign(std::string_view secret, const Authorization& auth,
                 std::string_view string_to_sign);

// Checks a signed request: the date is present, matches the scope and lies within kMaxSkew of
// `now`; `host` and the date are signed; the signature is the one `secret` makes. Errors are
// IncompleteSignatureException (malformed) or InvalidSignatureException (does not verify or
// expired), with a message that says which.
Status verify(const HttpRequest& request, const Authorization& auth, std::string_view secret,
              Time now);

// RFC 3986 percent-encoding as SigV4 uses it: unreserved characters stay, `/` stays when
// `keep_slash`.
std::string uri_encode(std::string_view s, bool keep_slash);

}  // namespace gf::sigv4
