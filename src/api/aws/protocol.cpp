#include "api/aws/protocol.h"

#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <cmath>

#include "api/auth.h"
#include "core/ids.h"

namespace gf {

void register_aws_routes(Api& api) {
  aws::register_sagemaker(api);
  aws::register_batch(api);
}

namespace aws {

Result<Json> read_input(const HttpRequest& outer) {
  if (outer.body.find_first_not_of(" \t\r\n") == std::string::npos) return Json::object();
  GF_ASSIGN_OR_RETURN(Json body, parse_json(outer.body));
  if (!body.is_object())
    return validation_error("body: expected a JSON object, got " + describe_json_value(body));
  return body;
}

bool is_read_operation(std::string_view op) {
  auto starts = [op](std::string_view prefix) {
    if (op.size() < prefix.size()) return false;
    for (size_t i = 0; i < prefix.size(); ++i) {
      if (std::tolower(static_cast<unsigned char>(op[i])) != prefix[i]) return false;
    }
    return true;
  };
  return starts("describe") || starts("list") || starts("get");
}

void iso_times_to_epoch(Json& body) {
  if (body.is_array()) {
    for (Json& item : body) iso_times_to_epoch(item);
    return;
  }
  if (!body.is_object()) return;
  for (auto it = body.begin(); it != body.end(); ++it) {
    Json& v = it.value();
    if (v.is_string() && it.key().ends_with("Time")) {
      if (auto t = parse_iso8601(v.get_ref<const std::string&>()); t.ok()) {
        const int64_t us = to_micros(*t);
        if (us % 1'000'000 == 0) {
          v = us / 1'000'000;
        } else {
          v = static_cast<double>(us) / 1e6;
        }
      }
    } else if (v.is_object() || v.is_array()) {
      iso_times_to_epoch(v);
    }
  }
}

Result<std::string> epoch_to_iso(const Json& value, const std::string& field) {
  if (value.is_string()) {
    const std::string& s = value.get_ref<const std::string&>();
    if (parse_iso8601(s).ok()) return s;
    double secs = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), secs);
    if (ec == std::errc() && p == s.data() + s.size()) return epoch_to_iso(Json(secs), field);
    return validation_error(field + ": expected epoch seconds or an ISO 8601 time, got \"" +
                            printable(s, 60) + "\"");
  }
  if (!value.is_number())
    return validation_error(field + ": expected a timestamp, got " + describe_json_value(value));
  const double secs = value.get<double>();
  // 0001-01-01 .. 9999-12-31, the range ISO 8601 here writes.
  if (!std::isfinite(secs) || secs < -62135596800.0 || secs > 253402300799.0)
    return validation_error(fmt::format("{}: {} is out of range", field, secs));
  return format_iso8601(from_micros(static_cast<int64_t>(std::llround(secs * 1e6))));
}

Result<std::string> string_field(const Json& input, const std::string& field, bool required) {
  auto it = input.find(field);
  if (it == input.end() || it->is_null()) {
    if (required) return validation_error(field + ": required");
    return std::string();
  }
  if (!it->is_string())
    return validation_error(field + ": expected string, got " + describe_json_value(*it));
  std::string s = it->get<std::string>();
  if (required && s.empty()) return validation_error(field + ": must not be empty");
  return s;
}

Status check_segment(const std::string& value, const std::string& field) {
  if (value.empty() || value.size() > 256)
    return validation_error(
        fmt::format("{}: must be 1-256 characters, got {}", field, value.size()));
  if (value.find('/') != std::string::npos || value == "." || value == "..")
    return validation_error(field + ": \"" + printable(value, 80) + "\" is not a name");
  return ok_status();
}

std::string batch_arn(const std::string& type, const std::string& name) {
  return make_arn(ArnConfig{}, type, name);
}

namespace {

std::optional<std::string> hex_decode(std::string_view s) {
  if (s.size() % 2 != 0) return std::nullopt;
  std::string out;
  for (size_t i = 0; i < s.size(); i += 2) {
    unsigned v = 0;
    auto [p, ec] = std::from_chars(s.data() + i, s.data() + i + 2, v, 16);
    if (ec != std::errc() || p != s.data() + i + 2) return std::nullopt;
    out += static_cast<char>(v);
  }
  return out;
}

}  // namespace

Status page(Json& body, const std::string& list_field, const Json& input,
            const std::string& max_field, const std::string& token_field, int64_t limit,
            const std::function<std::string(const Json&)>& key) {
  Json& items = body[list_field];
  if (!items.is_array()) items = Json::array();
  int64_t max = limit;
  if (auto it = input.find(max_field); it != input.end() && !it->is_null()) {
    if (!it->is_number_integer())
      return validation_error(max_field + ": expected an integer, got " + describe_json_value(*it));
    max = it->get<int64_t>();
    if (max < 1 || max > limit)
      return validation_error(
          fmt::format("{}: must be between 1 and {}, got {}", max_field, limit, max));
  }
  GF_ASSIGN_OR_RETURN(std::string token, string_field(input, token_field, false));
  // A token belongs to one list with one set of filters: the input without its page fields.
  Json filters = input;
  filters.erase(max_field);
  filters.erase(token_field);
  const std::string list_id = sha256_hex(list_field + "\n" + safe_dump(filters)).substr(0, 12);
  size_t start = 0;
  if (!token.empty()) {
    // "<offset>:<list id>:<key of the item before it>", hex-encoded so that it reads as opaque.
    const Status bad = validation_error(
        token_field + ": not a token this server issued for this list and these filters");
    auto text = hex_decode(token);
    if (!text) return bad;
    const size_t colon = text->find(':');
    if (colon == std::string::npos || text->size() < colon + 2 + list_id.size() ||
        text->compare(colon + 1, list_id.size(), list_id) != 0 ||
        (*text)[colon + 1 + list_id.size()] != ':')
      return bad;
    size_t offset = 0;
    auto [p, ec] = std::from_chars(text->data(), text->data() + colon, offset);
    if (ec != std::errc() || p != text->data() + colon || offset == 0) return bad;
    const std::string before = text->substr(colon + 2 + list_id.size());
    if (offset <= items.size() && key(items[offset - 1]) == before) {
      start = offset;
    } else {
      // Items came or went before the page: continue after the item the token names, or where
      // it stood when it went itself.
      start = std::min(offset - 1, items.size());
      for (size_t i = 0; i < items.size(); ++i) {
        if (key(items[i]) == before) {
          start = i + 1;
          break;
        }
      }
    }
  }
  const size_t end = std::min(items.size(), start + static_cast<size_t>(max));
  std::string next;
  if (end < items.size())
    next = hex_lower(fmt::format("{}:{}:{}", end, list_id, key(items[end - 1])));
  Json out = Json::array();
  for (size_t i = start; i < end; ++i) out.push_back(std::move(items[i]));
  items = std::move(out);
  if (!next.empty()) body[token_field] = std::move(next);
  return ok_status();
}

}  // namespace aws
}  // namespace gf
