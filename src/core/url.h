// Percent-encoding of one URL path segment or query value (RFC 3986 unreserved characters kept).
#pragma once

#include <string>

namespace gf {

std::string url_encode(const std::string& value);

}  // namespace gf
