#include "core/k8s_names.h"

#include <algorithm>

namespace gf {
namespace {

bool lower_alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }
bool alnum(char c) { return lower_alnum(c) || (c >= 'A' && c <= 'Z'); }

// The name part of a label key, and a label value: [A-Za-z0-9-_.], alphanumeric at both ends.
bool valid_label_name(std::string_view s) {
  if (s.empty() || s.size() > 63 || !alnum(s.front()) || !alnum(s.back())) return false;
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return alnum(c) || c == '-' || c == '_' || c == '.'; });
}

}  // namespace

bool valid_dns_label(std::string_view s) {
  if (s.empty() || s.size() > 63 || !lower_alnum(s.front()) || !lower_alnum(s.back())) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return lower_alnum(c) || c == '-'; });
}

bool valid_dns_subdomain(std::string_view s) {
  if (s.empty() || s.size() > 253) return false;
  size_t start = 0;
  while (true) {
    const size_t dot = s.find('.', start);
    if (!valid_dns_label(s.substr(start, dot == std::string_view::npos ? dot : dot - start)))
      return false;
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

std::string label_key_error(std::string_view key) {
  const size_t slash = key.find('/');
  std::string_view name = key;
  if (slash != std::string_view::npos) {
    const std::string_view prefix = key.substr(0, slash);
    if (!valid_dns_subdomain(prefix)) {
      return "the prefix before '/' must be a DNS subdomain (lower-case letters, digits, '-' and "
             "'.', at most 253 characters)";
    }
    name = key.substr(slash + 1);
  }
  if (!valid_label_name(name)) {
    return "a label key must be 1-63 characters of letters, digits, '-', '_' or '.', starting and "
           "ending with a letter or digit (with an optional DNS prefix and '/')";
  }
  return "";
}

std::string label_value_error(std::string_view value) {
  if (value.empty() || valid_label_name(value)) return "";
  return "a label value must be empty or 1-63 characters of letters, digits, '-', '_' or '.', "
         "starting and ending with a letter or digit";
}

}  // namespace gf
