// Kubernetes object-name rules, shared by every front end that reads Kubernetes documents.
#pragma once

#include <string>
#include <string_view>

namespace gf {

// DNS-1123 label: 1-63 characters of [a-z0-9-], starting and ending alphanumeric (namespaces,
// most object names).
bool valid_dns_label(std::string_view s);
// DNS-1123 subdomain: dot-separated labels, at most 253 characters.
bool valid_dns_subdomain(std::string_view s);
// A label key: an optional DNS-subdomain prefix and `/`, then a name of 1-63 characters of
// [A-Za-z0-9-_.] that starts and ends alphanumeric. "" when valid, else why not.
std::string label_key_error(std::string_view key);
// A label value: empty, or 1-63 characters of [A-Za-z0-9-_.] starting and ending alphanumeric.
std::string label_value_error(std::string_view value);

}  // namespace gf
