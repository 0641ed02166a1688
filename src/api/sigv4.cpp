#include "api/sigv4.h"

#include <fmt/format.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <algorithm>
#include <cctype>

#include "api/auth.h"

namespace gf::sigv4 {
namespace {

std::string hmac(std::string_view key, std::string_view data) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(data.data()), data.size(), out, &len);
  return std::string(reinterpret_cast<const char*>(out), len);
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// A header value as SigV4 signs it: trimmed, runs of spaces made one.
std::string canonical_value(std::string_view v) {
  v = trim(v);
  std::string out;
  out.reserve(v.size());
  for (char c : v) {
    if ((c == ' ' || c == '\t') && !out.empty() && out.back() == ' ') continue;
    out += c == '\t' ? ' ' : c;
  }
  return out;
}

Status incomplete(const std::string& what) {
  return Status(ErrorCode::kIncompleteSignature, "Authorization: " + what);
}

// The canonical query string: every name=value pair, each part decoded and encoded again the one
// way SigV4 encodes, sorted. From the target as it arrived when there is one (so repeated names
// and a literal `+` sign as the client signed them), else from the decoded map.
std::string canonical_query(const HttpRequest& request) {
  std::vector<std::pair<std::string, std::string>> pairs;
  if (!request.target.empty()) {
    const size_t q = request.target.find('?');
    std::string_view rest = q == std::string::npos ? std::string_view()
                                                   : std::string_view(request.target).substr(q + 1);
    while (!rest.empty()) {
      const size_t amp = rest.find('&');
      const std::string_view pair = rest.substr(0, amp);
      if (!pair.empty()) {
        const size_t eq = pair.find('=');
        pairs.emplace_back(uri_encode(percent_decode(pair.substr(0, eq), false), false),
                           eq == std::string_view::npos
                               ? ""
                               : uri_encode(percent_decode(pair.substr(eq + 1), false), false));
      }
      if (amp == std::string_view::npos) break;
      rest.remove_prefix(amp + 1);
    }
  } else {
    for (const auto& [k, v] : request.query)
      pairs.emplace_back(uri_encode(k, false), uri_encode(v, false));
  }
  std::sort(pairs.begin(), pairs.end());
  std::string out;
  for (size_t i = 0; i < pairs.size(); ++i)
    out += (i ? "&" : "") + pairs[i].first + "=" + pairs[i].second;
  return out;
}

// The canonical URI: the path as it arrived (still encoded), encoded once more, as SigV4 does for
// every service but S3.
std::string canonical_uri(const HttpRequest& request) {
  if (!request.target.empty()) {
    const std::string raw = request.target.substr(0, request.target.find('?'));
    return uri_encode(raw.empty() ? "/" : raw, true);
  }
  return uri_encode(request.path.empty() ? "/" : request.path, true);
}

bool is_lower_hex(std::string_view s) {
  return s.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

}  // namespace

std::string uri_encode(std::string_view s, bool keep_slash) {
  std::string out;
  out.reserve(s.size());
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' ||
        (keep_slash && c == '/')) {
      out += static_cast<char>(c);
    } else {
      out += fmt::format("%{:02X}", c);
    }
  }
  return out;
}

bool is_sigv4(std::string_view header) {
  return header.size() > kAlgorithm.size() && header.substr(0, kAlgorithm.size()) == kAlgorithm &&
         header[kAlgorithm.size()] == ' ';
}

Result<Authorization> parse(std::string_view header) {
  if (!is_sigv4(header)) return incomplete("expected the AWS4-HMAC-SHA256 scheme");
  std::string_view rest = header.substr(kAlgorithm.size() + 1);
  std::string credential, signed_headers, signature;
  while (!rest.empty()) {
    const size_t comma = rest.find(',');
    const std::string_view part = trim(rest.substr(0, comma));
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    const size_t eq = part.find('=');
    if (eq == std::string_view::npos) continue;
    const std::string_view key = part.substr(0, eq), value = part.substr(eq + 1);
    if (key == "Credential") credential = value;
    if (key == "SignedHeaders") signed_headers = value;
    if (key == "Signature") signature = value;
  }
  if (credential.empty()) return incomplete("Credential= is missing");
  if (signed_headers.empty()) return incomplete("SignedHeaders= is missing");
  if (signature.empty()) return incomplete("Signature= is missing");
  Authorization a;
  std::vector<std::string> parts;
  for (size_t b = 0;;) {
    const size_t slash = credential.find('/', b);
    parts.push_back(credential.substr(b, slash - b));
    if (slash == std::string::npos) break;
    b = slash + 1;
  }
  if (parts.size() != 5 || parts[4] != "aws4_request" || parts[0].empty()) {
    return incomplete(
        "Credential: expected <access key id>/<YYYYMMDD>/<region>/<service>/aws4_request");
  }
  a.access_key_id = parts[0];
  if (a.access_key_id.size() > 128 ||
      !std::all_of(a.access_key_id.begin(), a.access_key_id.end(),
                   [](unsigned char c) { return std::isalnum(c) != 0; }))
    return incomplete("Credential: the access key id must be 1-128 letters and digits");
  a.date = parts[1];
  a.region = parts[2];
  a.service = parts[3];
  if (a.date.size() != 8 || a.date.find_first_not_of("0123456789") != std::string::npos)
    return incomplete("Credential: the date of the scope must be YYYYMMDD, got \"" +
                      printable(a.date, 40) + "\"");
  for (size_t b = 0;;) {
    const size_t semi = signed_headers.find(';', b);
    std::string name = signed_headers.substr(b, semi - b);
    if (name.empty() || name != normalize_identity(name))
      return incomplete("SignedHeaders: expected lower-case header names separated by ';'");
    a.signed_headers.push_back(std::move(name));
    if (semi == std::string::npos) break;
    b = semi + 1;
  }
  if (!std::is_sorted(a.signed_headers.begin(), a.signed_headers.end()))
    return incomplete("SignedHeaders: the names must be in sorted order");
  if (signature.size() != 64 || !is_lower_hex(signature))
    return incomplete("Signature: expected 64 lower-case hex digits");
  a.signature = signature;
  return a;
}

Result<Time> parse_amz_date(std::string_view t) {
  const bool shape = t.size() == 16 && t[8] == 'T' && t[15] == 'Z' &&
                     t.substr(0, 8).find_first_not_of("0123456789") == std::string_view::npos &&
                     t.substr(9, 6).find_first_not_of("0123456789") == std::string_view::npos;
  if (!shape) {
    return Status(ErrorCode::kIncompleteSignature,
                  "X-Amz-Date: expected YYYYMMDD'T'HHMMSS'Z', got \"" + printable(t, 40) + "\"");
  }
  const std::string iso =
      fmt::format("{}-{}-{}T{}:{}:{}Z", t.substr(0, 4), t.substr(4, 2), t.substr(6, 2),
                  t.substr(9, 2), t.substr(11, 2), t.substr(13, 2));
  auto parsed = parse_iso8601(iso);
  if (!parsed.ok())
    return Status(ErrorCode::kIncompleteSignature,
                  "X-Amz-Date: \"" + std::string(t) + "\" is not a valid time");
  return *parsed;
}

std::string canonical_request(const HttpRequest& request,
                              const std::vector<std::string>& signed_headers) {
  std::string out = request.method + "\n";
  out += canonical_uri(request) + "\n";
  out += canonical_query(request) + "\n";
  for (const std::string& name : signed_headers) {
    out += name + ":" + canonical_value(request.header_or(name, "")) + "\n";
  }
  out += "\n";
  for (size_t i = 0; i < signed_headers.size(); ++i) out += (i ? ";" : "") + signed_headers[i];
  out += "\n" + sha256_hex(request.body);
  return out;
}

std::string string_to_sign(std::string_view amz_date, std::string_view scope,
                           std::string_view canonical) {
  return fmt::format("{}\n{}\n{}\n{}", kAlgorithm, amz_date, scope, sha256_hex(canonical));
}

std::string sign(std::string_view secret, const Authorization& auth, std::string_view to_sign) {
  std::string key = hmac("AWS4" + std::string(secret), auth.date);
  key = hmac(key, auth.region);
  key = hmac(key, auth.service);
  key = hmac(key, "aws4_request");
  const std::string mac = hmac(key, to_sign);
  return hex_lower(mac);
}

Status verify(const HttpRequest& request, const Authorization& auth, std::string_view secret,
              Time now) {
  const bool has_amz_date = request.headers.contains("x-amz-date");
  const std::string date_header = has_amz_date ? "x-amz-date" : "date";
  const std::string amz_date = request.header_or(date_header, "");
  if (amz_date.empty())
    return Status(ErrorCode::kIncompleteSignature,
                  "X-Amz-Date: a signed request needs the X-Amz-Date header");
  GF_ASSIGN_OR_RETURN(Time at, parse_amz_date(amz_date));
  auto signs = [&](const std::string& name) {
    return std::find(auth.signed_headers.begin(), auth.signed_headers.end(), name) !=
           auth.signed_headers.end();
  };
  for (const std::string& name : {std::string("host"), date_header}) {
    if (!signs(name))
      return Status(ErrorCode::kIncompleteSignature,
                    "Authorization: SignedHeaders must include " + name);
  }
  // What chooses the operation or names the write is signed too, so that a captured request
  // cannot be replayed as another operation.
  for (const char* name : {"x-amz-target", "idempotency-key"}) {
    if (request.headers.contains(name) && !signs(name))
      return Status(ErrorCode::kIncompleteSignature,
                    std::string("Authorization: SignedHeaders must include ") + name +
                        ", which the request carries");
  }
  for (const std::string& name : auth.signed_headers) {
    if (!request.headers.contains(name))
      return Status(ErrorCode::kIncompleteSignature, "Authorization: SignedHeaders names " + name +
                                                         ", which the request does not carry");
  }
  if (amz_date.substr(0, 8) != auth.date) {
    return Status(ErrorCode::kInvalidSignature, "Credential: the scope's date " + auth.date +
                                                    " is not the day of X-Amz-Date " + amz_date);
  }
  if (at < now - kMaxSkew || at > now + kMaxSkew) {
    return Status(ErrorCode::kInvalidSignature,
                  fmt::format("Signature expired: {} is not within 15 minutes of the server's "
                              "time {}",
                              format_iso8601(at), format_iso8601(now)));
  }
  const std::string expected =
      sign(secret, auth,
           string_to_sign(amz_date, auth.scope(), canonical_request(request, auth.signed_headers)));
  if (expected.size() != auth.signature.size() ||
      CRYPTO_memcmp(expected.data(), auth.signature.data(), expected.size()) != 0) {
    return Status(ErrorCode::kInvalidSignature,
                  "The request signature we calculated does not match the signature you "
                  "provided. Check your AWS Secret Access Key and signing method.");
  }
  return ok_status();
}

}  // namespace gf::sigv4
