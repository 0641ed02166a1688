#include "core/quantity.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <optional>
#include <system_error>

namespace gf {

namespace {

constexpr int64_t kMaxValue = std::numeric_limits<int64_t>::max();
constexpr int kMaxValueDigits = 19;  // digits in 9223372036854775807
// Exponents are clamped to this magnitude while parsing: any nonzero mantissa (bounded by the
// input length) scaled that far has already overflowed int64 or fallen below one unit.
constexpr int64_t kExponentClamp = 1'000'000;

struct Suffix {
  std::string_view text;
  int exp10;    // decimal SI power of ten
  int pow1024;  // binary SI power of 1024
};

constexpr Suffix kSuffixes[] = {
    {"", 0, 0},   {"n", -9, 0}, {"u", -6, 0}, {"m", -3, 0}, {"k", 3, 0},  {"M", 6, 0},
    {"G", 9, 0},  {"T", 12, 0}, {"P", 15, 0}, {"E", 18, 0}, {"Ki", 0, 1}, {"Mi", 0, 2},
    {"Gi", 0, 3}, {"Ti", 0, 4}, {"Pi", 0, 5}, {"Ei", 0, 6},
};

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// `shown` is the input as the user wrote it: quoted for strings, bare for JSON numbers.
Status invalid(std::string_view shown, std::string_view what) {
  return validation_error("invalid quantity " + std::string(shown) + ": " + std::string(what));
}

std::string quote(std::string_view text) { return "\"" + std::string(text) + "\""; }

std::string too_large(QuantityScale scale) {
  return "too large (at most " + format_quantity(kMaxValue, scale) + ")";
}

// Parses "e3", "E-2", "e+10" into a clamped exponent; nullopt if malformed.
std::optional<int64_t> parse_exponent(std::string_view s) {
  if (s.size() < 2 || (s[0] != 'e' && s[0] != 'E')) return std::nullopt;
  size_t i = 1;
  bool negative = false;
  if (s[i] == '+' || s[i] == '-') negative = s[i++] == '-';
  if (i == s.size()) return std::nullopt;
  int64_t e = 0;
  for (; i < s.size(); ++i) {
    if (!is_digit(s[i])) return std::nullopt;
    e = std::min(kExponentClamp, e * 10 + (s[i] - '0'));
  }
  return negative ? -e : e;
}

// digits := digits * m, on a big-endian decimal digit string.
void multiply_digits(std::string& digits, uint64_t m) {
  unsigned __int128 carry = 0;
  for (size_t i = digits.size(); i-- > 0;) {
    unsigned __int128 cur = static_cast<unsigned __int128>(digits[i] - '0') * m + carry;
    digits[i] = static_cast<char>('0' + static_cast<int>(cur % 10));
    carry = cur / 10;
  }
  std::string head;
  while (carry > 0) {
    head.insert(head.begin(), static_cast<char>('0' + static_cast<int>(carry % 10)));
    carry /= 10;
  }
  digits.insert(0, head);
}

// Value of a string of at most 19 decimal digits.
unsigned __int128 digits_value(std::string_view digits) {
  unsigned __int128 v = 0;
  for (char c : digits) v = v * 10 + static_cast<unsigned>(c - '0');
  return v;
}

// The shared core. `allow_round`: whether a value that is not a whole number of the scale's unit
// rounds up (true) or is an error (false).
Result<int64_t> parse_impl(std::string_view text, std::string_view shown, QuantityScale scale,
                           bool allow_round) {
  if (text.empty()) {
    return invalid(shown, "empty; expected a number such as 2, 500m, 1.5Gi or 1e3");
  }
  size_t i = 0;
  bool negative = false;
  if (text[i] == '+' || text[i] == '-') negative = text[i++] == '-';
  std::string digits;
  int64_t frac_len = 0;
  while (i < text.size() && is_digit(text[i])) digits += text[i++];
  if (i < text.size() && text[i] == '.') {
    ++i;
    while (i < text.size() && is_digit(text[i])) {
      digits += text[i++];
      ++frac_len;
    }
  }
  if (digits.empty()) {
    return invalid(shown, "expected a number such as 2, 500m, 1.5Gi or 1e3");
  }

  const std::string_view suffix = text.substr(i);
  int64_t exp10 = -frac_len + (scale == QuantityScale::kMilli ? 3 : 0);
  int pow1024 = 0;
  bool known = false;
  for (const Suffix& s : kSuffixes) {
    if (s.text == suffix) {
      exp10 += s.exp10;
      pow1024 = s.pow1024;
      known = true;
      break;
    }
  }
  if (!known) {
    if (auto e = parse_exponent(suffix)) {
      exp10 += *e;
    } else if (!suffix.empty() && (suffix[0] == 'e' || suffix[0] == 'E') && suffix.size() > 1) {
      return invalid(shown, "malformed exponent '" + std::string(suffix) +
                                "' (expected e or E, an optional sign and digits, e.g. 1e3)");
    } else {
      return invalid(shown, "unknown suffix '" + std::string(suffix) +
                                "' (use Ki Mi Gi Ti Pi Ei, n u m k M G T P E, or an exponent "
                                "like 1e3)");
    }
  }

  // From here value = digits * 10^exp10 * 1024^pow1024 exactly.
  digits.erase(0, digits.find_first_not_of('0'));
  if (digits.empty()) return int64_t{0};
  if (negative) return invalid(shown, "must not be negative (resource quantities are >= 0)");
  if (pow1024 > 0) multiply_digits(digits, uint64_t{1} << (10 * pow1024));
  const size_t last = digits.find_last_not_of('0');
  exp10 += static_cast<int64_t>(digits.size() - last - 1);
  digits.resize(last + 1);

  // Invariant: digits has no leading or trailing zeros, so if exp10 < 0 the value has a nonzero
  // fractional part.
  const int64_t int_len = static_cast<int64_t>(digits.size()) + exp10;
  if (int_len > kMaxValueDigits) return invalid(shown, too_large(scale));
  unsigned __int128 v = 0;
  if (exp10 >= 0) {
    v = digits_value(digits);
    for (int64_t k = 0; k < exp10; ++k) v *= 10;
  } else {
    if (!allow_round) return invalid(shown, "must be a whole number");
    if (int_len > 0) v = digits_value(std::string_view(digits).substr(0, int_len));
    v += 1;
  }
  if (v > static_cast<unsigned __int128>(kMaxValue)) return invalid(shown, too_large(scale));
  return static_cast<int64_t>(v);
}

}  // namespace

Result<int64_t> parse_quantity(std::string_view text, QuantityScale scale) {
  return parse_impl(text, quote(text), scale, /*allow_round=*/true);
}

Result<int64_t> parse_quantity_json(const nlohmann::json& v, QuantityScale scale) {
  switch (v.type()) {
    case nlohmann::json::value_t::string: {
      const auto& s = v.get_ref<const std::string&>();
      return parse_impl(s, quote(s), scale, /*allow_round=*/true);
    }
    case nlohmann::json::value_t::number_unsigned: {
      const std::string s = std::to_string(v.get<uint64_t>());
      return parse_impl(s, s, scale, /*allow_round=*/false);
    }
    case nlohmann::json::value_t::number_integer: {
      const std::string s = std::to_string(v.get<int64_t>());
      return parse_impl(s, s, scale, /*allow_round=*/false);
    }
    case nlohmann::json::value_t::number_float: {
      const double d = v.get<double>();
      if (!std::isfinite(d)) return invalid(v.dump(), "not a finite number");
      // Shortest text that reads back to the same double: "0.1", not "0.10000000000000001".
      char buf[64];
      auto [end, ec] = std::to_chars(buf, buf + sizeof buf, d);
      if (ec != std::errc()) return invalid(v.dump(), "cannot be formatted");
      const std::string_view s(buf, static_cast<size_t>(end - buf));
      return parse_impl(s, s, scale, /*allow_round=*/true);  // same rule as the string "1.5"
    }
    default:
      return validation_error(std::string("invalid quantity: expected a number or a string such as "
                                          "\"2Gi\" or \"500m\", got ") +
                              v.type_name());
  }
}

std::string format_quantity(int64_t value, QuantityScale scale) {
  if (scale == QuantityScale::kUnit || value % 1000 != 0) {
    return std::to_string(value) + (scale == QuantityScale::kMilli ? "m" : "");
  }
  return std::to_string(value / 1000);
}

}  // namespace gf
