// Kubernetes object-name rules, shared by every front end that reads Kubernetes documents.
#pragma once

#include <string_view>

namespace gf {

// DNS-1123 label: 1-63 characters of [a-z0-9-], starting and ending alphanumeric (namespaces,
// most object names).
bool valid_dns_label(std::string_view s);
// DNS-1123 subdomain: dot-separated labels, at most 253 characters.
bool valid_dns_subdomain(std::string_view s);

}  // namespace gf
