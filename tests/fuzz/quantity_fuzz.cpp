// Kubernetes quantities (core/quantity.h): every resource request, quota limit and capacity in
// the API goes through parse_quantity or parse_quantity_json. The input is one quantity text.
//
// Invariants checked, for both scales:
//  - a parsed value is >= 0 and its canonical text (format_quantity) parses back to it;
//  - the JSON string form gives exactly what the text gives;
//  - the two scales agree: a request never shrinks by rounding, so ceil(milli / 1000) == unit,
//    and a value that fits in millis also fits in units;
//  - the same text read as a JSON number (what YAML `cpu: 1.5` becomes) gives what the quoted
//    text gives, and an integral JSON number counts whole units.
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>

#include "core/quantity.h"
#include "fuzz_support.h"

namespace gf {
namespace {

std::string show(const Result<int64_t>& r) {
  return r.ok() ? std::to_string(*r) : r.status().to_string();
}

std::optional<int64_t> check_scale(std::string_view text, QuantityScale scale) {
  const Result<int64_t> parsed = parse_quantity(text, scale);
  const Result<int64_t> as_json = parse_quantity_json(Json(std::string(text)), scale);
  FUZZ_CHECK(parsed.ok() == as_json.ok() && (!parsed.ok() || *parsed == *as_json),
             "text " + show(parsed) + " vs JSON string " + show(as_json));
  if (!parsed.ok()) {
    FUZZ_CHECK_ERROR(parsed.status());
    return std::nullopt;
  }
  FUZZ_CHECK(*parsed >= 0, std::to_string(*parsed));
  const std::string canonical = format_quantity(*parsed, scale);
  const Result<int64_t> again = parse_quantity(canonical, scale);
  FUZZ_CHECK(again.ok() && *again == *parsed,
             std::to_string(*parsed) + " -> \"" + canonical + "\" -> " + show(again));
  return *parsed;
}

// The text as a JSON number when all of it is one (the way parse_json would have typed it),
// built here rather than through parse_json, whose own target covers number parsing.
void check_json_number(std::string_view text, QuantityScale scale,
                       std::optional<int64_t> from_text) {
  if (text.empty() || text.size() > 40) return;
  int64_t n = 0;
  auto [iend, iec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (iec == std::errc() && iend == text.data() + text.size()) {
    const Result<int64_t> r = parse_quantity_json(Json(n), scale);
    if (n < 0) {
      FUZZ_CHECK(!r.ok(), "negative integer " + std::to_string(n) + " accepted");
      return;
    }
    if (scale == QuantityScale::kUnit) {
      FUZZ_CHECK(r.ok() && *r == n, std::to_string(n) + " -> " + show(r));
    } else if (n <= std::numeric_limits<int64_t>::max() / 1000) {
      FUZZ_CHECK(r.ok() && *r == n * 1000, std::to_string(n) + " -> " + show(r));
    } else {
      FUZZ_CHECK(!r.ok(), std::to_string(n) + " overflows millis but gave " + show(r));
    }
    return;
  }
  double d = 0;
  auto [dend, dec] = std::from_chars(text.data(), text.data() + text.size(), d);
  if (dec != std::errc() || dend != text.data() + text.size() || !std::isfinite(d)) return;
  const Result<int64_t> r = parse_quantity_json(Json(d), scale);
  if (!r.ok()) {
    FUZZ_CHECK_ERROR(r.status());
    return;
  }
  FUZZ_CHECK(*r >= 0, std::to_string(*r));
  // A float is read through its shortest decimal text, so when that text is the input itself
  // both readings must agree exactly.
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, d);
  if (ec == std::errc() && std::string_view(buf, end - buf) == text) {
    FUZZ_CHECK(from_text.has_value() && *from_text == *r,
               std::string(text) + ": JSON number " + show(r));
  }
}

}  // namespace
}  // namespace gf

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using gf::QuantityScale;
  if (size > gf::fuzz::kMaxInputBytes) return -1;
  const std::string_view text = gf::fuzz::as_text(data, size);
  const std::optional<int64_t> unit = gf::check_scale(text, QuantityScale::kUnit);
  const std::optional<int64_t> milli = gf::check_scale(text, QuantityScale::kMilli);
  if (milli) {
    FUZZ_CHECK(unit.has_value(), "fits in millis (" + std::to_string(*milli) + ") but not units");
    FUZZ_CHECK(*milli / 1000 + (*milli % 1000 != 0) == *unit,
               "milli " + std::to_string(*milli) + " vs unit " + std::to_string(*unit));
  } else if (unit) {
    // Only overflow may separate them: the milli value is 1000 times larger.
    FUZZ_CHECK(*unit > std::numeric_limits<int64_t>::max() / 1000 - 1,
               "unit " + std::to_string(*unit) + " but no milli value");
  }
  gf::check_json_number(text, QuantityScale::kUnit, unit);
  gf::check_json_number(text, QuantityScale::kMilli, milli);
  return 0;
}
