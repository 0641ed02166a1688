#include "health/kernel_log.h"

#include <algorithm>
#include <array>
#include <cstdio>

namespace gf::health {

namespace text {

namespace {

uint32_t hex_value(char c) {
  if (is_digit(c)) return static_cast<uint32_t>(c - '0');
  if (c >= 'a' && c <= 'f') return static_cast<uint32_t>(c - 'a' + 10);
  return static_cast<uint32_t>(c - 'A' + 10);
}
}  // namespace

bool all_of(std::string_view s, bool (*pred)(char)) {
  return std::all_of(s.begin(), s.end(), pred);
}

std::string_view trim_left(std::string_view s) {
  while (!s.empty() && is_blank(s.front())) s.remove_prefix(1);
  return s;
}

std::string_view trim_right(std::string_view s) {
  while (!s.empty() && (is_blank(s.back()) || s.back() == '\r' || s.back() == '\n')) {
    s.remove_suffix(1);
  }
  return s;
}

bool consume(std::string_view& s, std::string_view literal) {
  if (!s.starts_with(literal)) return false;
  s.remove_prefix(literal.size());
  return true;
}

bool consume_digits(std::string_view& s, size_t min_n, size_t max_n) {
  size_t n = 0;
  while (n < s.size() && n < max_n && is_digit(s[n])) ++n;
  if (n < min_n) return false;
  s.remove_prefix(n);
  return true;
}

std::optional<uint32_t> parse_hex(std::string_view s, size_t min_n, size_t max_n) {
  if (s.size() < min_n || s.size() > max_n || s.size() > 8 || !all_of(s, is_hex)) {
    return std::nullopt;
  }
  uint32_t v = 0;
  for (char c : s) v = v * 16 + hex_value(c);
  return v;
}

}  // namespace text

namespace {

using namespace text;

// Control bytes never reach a kernel-log line unescaped (dmesg and journald print \xNN); tab is
// the one exception.
bool has_control_bytes(std::string_view s) {
  return std::any_of(s.begin(), s.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return (u < 0x20 && c != '\t') || u == 0x7f;
  });
}

bool consume_clock(std::string_view& s) {  // hh:mm:ss
  std::string_view t = s;
  if (!consume_digits(t, 2, 2) || !consume(t, ":") || !consume_digits(t, 2, 2) ||
      !consume(t, ":") || !consume_digits(t, 2, 2)) {
    return false;
  }
  s = t;
  return true;
}

// RFC 3164 / journalctl short: "Nov 30 05:00:00 ".
bool consume_syslog_date(std::string_view& s) {
  static constexpr std::array<std::string_view, 12> kMonths = {
      "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  std::string_view t = s;
  if (std::none_of(kMonths.begin(), kMonths.end(),
                   [&](std::string_view m) { return consume(t, m); })) {
    return false;
  }
  t = trim_left(t);
  if (!consume_digits(t, 1, 2) || !consume(t, " ") || !consume_clock(t)) return false;
  if (t.empty() || !is_blank(t.front())) return false;
  s = t;
  return true;
}

// ISO 8601 as rsyslog, journalctl -o short-iso and dmesg --time-format iso write it:
// "2025-11-30T05:00:00[.,frac][Z|±hh[:]mm] ".
bool consume_iso_stamp(std::string_view& s) {
  std::string_view t = s;
  if (!consume_digits(t, 4, 4) || !consume(t, "-") || !consume_digits(t, 2, 2) ||
      !consume(t, "-") || !consume_digits(t, 2, 2) || !consume(t, "T") || !consume_clock(t)) {
    return false;
  }
  if (consume(t, ".") || consume(t, ",")) {
    if (!consume_digits(t, 1, 9)) return false;
  }
  if (!consume(t, "Z") && (consume(t, "+") || consume(t, "-"))) {
    if (!consume_digits(t, 2, 2)) return false;
    consume(t, ":");
    if (!consume_digits(t, 2, 2)) return false;
  }
  if (t.empty() || !is_blank(t.front())) return false;
  s = t;
  return true;
}

bool consume_host(std::string_view& s) {
  size_t n = 0;
  while (n < s.size() && n < 255 && !is_blank(s[n])) ++n;
  if (n == 0 || n == s.size() || !is_blank(s[n])) return false;
  s.remove_prefix(n);
  return true;
}

// "[  123.456789]" (dmesg) or "[Fri Aug 30 11:43:09 2024]" (dmesg -T).
bool consume_bracket_stamp(std::string_view& s) {
  if (s.empty() || s.front() != '[') return false;
  const size_t close = s.find(']');
  if (close == std::string_view::npos || close < 2 || close > 64) return false;
  const std::string_view inside = s.substr(1, close - 1);
  const bool allowed = all_of(inside, [](char c) {
    return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == ' ' ||
           c == '.' || c == ':' || c == '+' || c == '-' || c == ',';
  });
  if (!allowed || std::none_of(inside.begin(), inside.end(), is_digit)) return false;
  s.remove_prefix(close + 1);
  return true;
}

// /dev/kmsg record header "4,1234,5678,-;" (priority, sequence, microseconds, flags).
bool consume_kmsg_header(std::string_view& s) {
  std::string_view t = s;
  if (!consume_digits(t, 1, 4) || !consume(t, ",") || !consume_digits(t, 1, 20) ||
      !consume(t, ",") || !consume_digits(t, 1, 20)) {
    return false;
  }
  const size_t semi = t.find(';');
  if (semi == std::string_view::npos || semi > 32) return false;
  if (std::any_of(t.begin(), t.begin() + static_cast<std::ptrdiff_t>(semi), is_blank)) {
    return false;
  }
  s = t.substr(semi + 1);
  return true;
}

// "[host ]kernel:" after a syslog time stamp.
bool consume_kernel_tag(std::string_view& s) {
  std::string_view t = trim_left(s);
  if (!consume(t, "kernel:")) {
    if (!consume_host(t)) return false;
    t = trim_left(t);
    if (!consume(t, "kernel:")) return false;
  }
  s = t;
  return true;
}

// The kernel message behind whatever transport prefix the line carries; nullopt when a syslog
// header names a program other than the kernel (user space can write "NVRM: Xid" into syslog).
std::optional<std::string_view> strip_prefix(std::string_view s) {
  s = trim_left(s);
  if (consume_syslog_date(s)) {
    if (!consume_kernel_tag(s)) return std::nullopt;
  } else if (consume_iso_stamp(s)) {
    consume_kernel_tag(s);  // dmesg --time-format iso has neither host nor tag
  } else {
    consume(s, "kernel:");
  }
  s = trim_left(s);
  if (s.starts_with("<")) {  // raw priority, dmesg -r
    std::string_view t = s.substr(1);
    if (consume_digits(t, 1, 3) && consume(t, ">")) s = t;
  }
  consume_kmsg_header(s);
  if (consume_bracket_stamp(s)) s = trim_left(s);
  return trim_left(s);
}

}  // namespace

std::optional<std::string_view> kernel_message(std::string_view line) {
  if (line.size() > kMaxLineBytes || has_control_bytes(trim_right(line))) return std::nullopt;
  const std::optional<std::string_view> body = strip_prefix(line);
  if (!body) return std::nullopt;
  return trim_right(*body);
}

std::string PciAddress::to_string() const {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04x:%02x:%02x.%x", domain, bus, device, function);
  return buf;
}

std::optional<PciAddress> parse_pci_address(std::string_view a) {
  const size_t c1 = a.find(':');
  if (c1 == std::string_view::npos) return std::nullopt;
  const size_t c2 = a.find(':', c1 + 1);
  std::string_view domain = "0", bus, rest;
  if (c2 == std::string_view::npos) {
    bus = a.substr(0, c1);
    rest = a.substr(c1 + 1);
  } else {
    domain = a.substr(0, c1);
    bus = a.substr(c1 + 1, c2 - c1 - 1);
    rest = a.substr(c2 + 1);
  }
  const size_t dot = rest.find('.');
  const std::string_view device = rest.substr(0, dot);
  const std::string_view function = dot == std::string_view::npos ? "0" : rest.substr(dot + 1);
  const auto d = text::parse_hex(domain, 1, 8), b = text::parse_hex(bus, 2, 2),
             dev = text::parse_hex(device, 2, 2), f = text::parse_hex(function, 1, 1);
  if (!d || !b || !dev || !f || *f > 7) return std::nullopt;
  return PciAddress{*d, *b, *dev, *f};
}

}  // namespace gf::health
