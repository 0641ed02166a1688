// Reading kernel-log lines as the node agent receives them (dmesg, syslog files, journald,
// /dev/kmsg): the kernel's own text behind the transport prefix, PCI addresses, and the few
// string_view helpers the line parsers share. Kept apart from the Xid parser because every
// kernel-log detector (xid, pcie-bus, npd-*) reads the same prefixes. Log lines are untrusted
// bytes: everything here takes any byte string and never reads past the view. Pure.
#pragma once

#include <compare>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gf::health {

// Longer lines are refused: the kernel caps a record near 1 kB, and detectors keep the raw line
// as evidence, so an unbounded line would be unbounded evidence.
inline constexpr size_t kMaxLineBytes = 4096;

// The kernel message of one line, without the transport prefix and surrounding blanks. Prefixes,
// each optional, in this order: a syslog time stamp (`Nov 30 05:00:00 `, which must then be
// followed by `[host ]kernel:`) or an ISO 8601 one (`2025-11-30T05:00:00.123456+00:00 `,
// optionally followed by `[host ]kernel:`), or a bare `kernel:`; a raw priority `<4>`; a
// /dev/kmsg header `4,1234,5678,-;`; a dmesg stamp `[  123.456789]` or `[Fri Aug 30 11:43:09
// 2024]`. nullopt when a syslog header names another program (user space can write anything into
// syslog), the line holds control bytes other than tab and a trailing CR/LF (dmesg and journald
// escape them, so a NUL means garbage), or it is longer than kMaxLineBytes.
std::optional<std::string_view> kernel_message(std::string_view line);

// A PCI address, domain:bus:device.function.
struct PciAddress {
  uint32_t domain = 0, bus = 0, device = 0, function = 0;
  auto operator<=>(const PciAddress&) const = default;  // PCI bus order
  std::string to_string() const;                        // "0000:b3:00.0", lower case
};
// "0000:18:00", "0000:B3:00.0", "18:00.0" (domain 0), "00000000:18:00.0" (NVML's 8-digit
// domain): bus and device exactly two hex digits, function one digit 0-7 (0 when absent), domain
// 1-8 hex digits. nullopt otherwise (blanks included).
std::optional<PciAddress> parse_pci_address(std::string_view text);

namespace text {

inline bool is_digit(char c) { return c >= '0' && c <= '9'; }
inline bool is_hex(char c) {
  return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
inline bool is_blank(char c) { return c == ' ' || c == '\t'; }
bool all_of(std::string_view s, bool (*pred)(char));
std::string_view trim_left(std::string_view s);   // spaces and tabs
std::string_view trim_right(std::string_view s);  // spaces, tabs, CR, LF
// Removes `literal` from the front of s when s starts with it.
bool consume(std::string_view& s, std::string_view literal);
// Removes min_n..max_n leading digits (as many as there are, up to max_n).
bool consume_digits(std::string_view& s, size_t min_n, size_t max_n);
// The value of min_n..max_n hex digits (max_n <= 8), nothing else.
std::optional<uint32_t> parse_hex(std::string_view s, size_t min_n, size_t max_n);

}  // namespace text
}  // namespace gf::health
