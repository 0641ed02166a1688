// Kubernetes resource quantities ("500m", "2Gi", "1e3") parsed exactly into int64 integers.
// No floating point is involved for strings: the mantissa digits, the decimal exponent and the
// binary multiplier are combined with exact decimal arithmetic, so "1.5Gi" is 1610612736 and
// "0.1" CPU is 100 millicores on every machine.
//
// Grammar (Kubernetes' resource.Quantity):
//   quantity  ::= [+|-] number [suffix]
//   number    ::= digits | digits "." [digits] | "." digits
//   suffix    ::= binary | decimal | ("e"|"E") [+|-] digits
//   binary    ::= Ki Mi Gi Ti Pi Ei            (powers of 1024)
//   decimal   ::= n u m "" k M G T P E         (powers of 1000, n = 10^-9 ... E = 10^18)
// No whitespace is allowed anywhere.
//
// Rules, all checked:
// - Quantities of resources are >= 0: a negative value is a ValidationException ("-0" is 0).
// - The result must fit in int64 (at most 9223372036854775807 units of the scale).
// - A value that is not a whole number of the scale's unit is rounded UP to the next whole unit,
//   as Kubernetes does for requests (Quantity.Value / MilliValue): "1n" CPU -> 1 millicore,
//   "0.5" GPU -> 1, "0.1Ki" bytes -> 103. A request therefore never shrinks to zero.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "core/result.h"

namespace gf {

enum class QuantityScale {
  kUnit,   // whole units: bytes, GPUs, pods, jobs, instances. "2Gi" -> 2147483648.
  kMilli,  // thousandths: CPU in millicores. "2" -> 2000, "500m" -> 500, "0.5" -> 500.
};

// Parses a Kubernetes quantity string into an integer count of the scale's unit.
// Errors read `invalid quantity "5Gb": unknown suffix 'Gb'`.
Result<int64_t> parse_quantity(std::string_view text, QuantityScale scale);

// Parses a quantity given in JSON: a string (as parse_quantity), an integer number (whole units,
// e.g. cpu: 2 -> 2000 millicores), or a floating-point number. A float is read through its
// shortest exact decimal text, never through double arithmetic; in kMilli it may be fractional
// (0.5 -> 500), and in both scales a fraction of the unit rounds up exactly as the same text
// would as a string (YAML `memory: 1.5` and `memory: "1.5"` mean the same: 2 bytes).
// Anything else (null, bool, object, array) is an error.
Result<int64_t> parse_quantity_json(const nlohmann::json& v, QuantityScale scale);

// Canonical text that parse_quantity reads back to the same value: kUnit "2147483648";
// kMilli "2" when a whole number of units, "1500m" otherwise.
std::string format_quantity(int64_t value, QuantityScale scale);

}  // namespace gf
