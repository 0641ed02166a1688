// JSON/YAML loading (core/json.h): every request body (parse_documents), every file a user
// hands in (scenarios, policies, quota objects), and `-o yaml` output (to_yaml). The input is
// one body.
//
// Invariants checked:
//  - parse_documents never throws, and a refusal says why;
//  - every document survives to_yaml and back unchanged, up to the documented losses (an integer
//    above int64 reads back as its digits, the text quantity parsing takes; yaml-cpp's emitter
//    writes ill-formed UTF-8, and Unicode noncharacters in quoted strings, as U+FFFD);
//  - every document survives Json::dump and parse_json unchanged (when its strings are UTF-8,
//    which dump requires);
//  - parse_yaml agrees with parse_yaml_documents on single documents;
//  - ObjectReader reads each field of an object with the reader its type calls for, without an
//    error, and then reports no unknown fields.
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "core/json.h"
#include "fuzz_support.h"

namespace gf {
namespace {

// True when a string holds a Unicode noncharacter (U+FDD0-U+FDEF, U+xxFFFE, U+xxFFFF), which
// yaml-cpp's emitter writes as U+FFFD when it quotes the string (but not when it writes it
// plain); `s` is well-formed UTF-8 here.
bool has_noncharacter(const std::string& s) {
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    const size_t len = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    uint32_t cp = len == 1 ? c : c & (0x7F >> len);
    for (size_t k = 1; k < len && i + k < s.size(); ++k) cp = (cp << 6) | (s[i + k] & 0x3F);
    if ((cp >= 0xFDD0 && cp <= 0xFDEF) || (cp & 0xFFFE) == 0xFFFE) return true;
    i += len;
  }
  return false;
}

bool any_noncharacter(const Json& value) {
  if (value.is_string()) return has_noncharacter(value.get_ref<const std::string&>());
  if (value.is_object()) {
    for (auto it = value.begin(); it != value.end(); ++it) {
      if (has_noncharacter(it.key()) || any_noncharacter(it.value())) return true;
    }
  } else if (value.is_array()) {
    for (const Json& item : value) {
      if (any_noncharacter(item)) return true;
    }
  }
  return false;
}

// What `value` becomes after to_yaml and parse_yaml: the documented losses applied.
Json after_yaml(const Json& value) {
  switch (value.type()) {
    case Json::value_t::object: {
      Json out = Json::object();
      for (auto it = value.begin(); it != value.end(); ++it) out[it.key()] = after_yaml(it.value());
      return out;
    }
    case Json::value_t::array: {
      Json out = Json::array();
      for (const Json& item : value) out.push_back(after_yaml(item));
      return out;
    }
    case Json::value_t::number_unsigned:
      if (value.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        return std::to_string(value.get<uint64_t>());
      }
      return value;
    default:
      return value;
  }
}

// True when every string (keys included) is UTF-8, i.e. Json::dump can write the value.
bool dumpable(const Json& value) {
  try {
    (void)value.dump();
    return true;
  } catch (const Json::type_error&) {
    return false;
  }
}

void check_yaml_round_trip(const Json& doc) {
  const std::string yaml = to_yaml(doc);
  const Result<std::vector<Json>> back = parse_yaml_documents(yaml);
  FUZZ_CHECK(back.ok(), "to_yaml wrote what parse_yaml refuses: " + back.status().to_string() +
                            "\n--- yaml ---\n" + yaml);
  if (doc.is_null()) {
    // A null document is skipped on reading, like an empty one.
    FUZZ_CHECK(back->empty(), yaml);
    return;
  }
  FUZZ_CHECK(back->size() == 1, std::to_string(back->size()) + " documents from\n" + yaml);
  // yaml-cpp's emitter writes ill-formed UTF-8, and noncharacters in quoted strings, as U+FFFD.
  if (!dumpable(doc) || any_noncharacter(doc)) return;
  const Json expected = after_yaml(doc);
  FUZZ_CHECK(back->front() == expected, "before: " + fuzz::dump(expected) + "\nafter:  " +
                                            fuzz::dump(back->front()) + "\n--- yaml ---\n" + yaml);
}

void check_json_round_trip(const Json& doc) {
  if (!dumpable(doc)) return;
  const std::string text = doc.dump();
  const Result<Json> back = parse_json(text);
  FUZZ_CHECK(back.ok() && *back == doc,
             text + " -> " + (back.ok() ? fuzz::dump(*back) : back.status().to_string()));
}

void check_reader(const Json& doc) {
  if (!doc.is_object()) {
    ObjectReader r(doc, "doc");
    FUZZ_CHECK(!r.ok(), "ObjectReader accepted " + json_type_name(doc));
    FUZZ_CHECK_ERROR(r.status());
    return;
  }
  ObjectReader r(doc, "doc");
  for (auto it = doc.begin(); it != doc.end(); ++it) {
    const std::string& key = it.key();
    const Json& v = it.value();
    // A null field counts as absent, the way an omitted optional field does.
    FUZZ_CHECK(r.has(key) == !v.is_null(), key);
    if (v.is_null()) {
      FUZZ_CHECK(r.optional_value(key) == nullptr, key);
    } else if (v.is_string()) {
      FUZZ_CHECK(r.required_string(key) == v.get_ref<const std::string&>(), key);
    } else if (v.is_boolean()) {
      FUZZ_CHECK(r.optional_bool(key) == v.get<bool>(), key);
    } else if (v.is_number_unsigned() &&
               v.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      // Too large for optional_int (its refusal is checked below); read it untyped.
      FUZZ_CHECK(r.optional_value(key) == &v, key);
    } else if (v.is_number_integer()) {
      FUZZ_CHECK(r.optional_int(key) == v.get<int64_t>(), key);
    } else if (v.is_object()) {
      FUZZ_CHECK(r.optional_object(key) == &v, key);
    } else if (v.is_array()) {
      FUZZ_CHECK(r.optional_array(key) == &v, key);
    } else {
      FUZZ_CHECK(r.optional_value(key) == &v, key);
    }
    FUZZ_CHECK(r.ok(), key + ": " + r.status().to_string());
    FUZZ_CHECK(!describe_json_value(v).empty(), key);
  }
  FUZZ_CHECK(r.unknown_fields().empty(), r.unknown_fields().front());
  // A typed read of a field of another type fails and names the field's path.
  for (auto it = doc.begin(); it != doc.end(); ++it) {
    if (it.value().is_string() || it.value().is_null()) continue;
    ObjectReader typed(doc, "doc");
    (void)typed.required_string(it.key());
    FUZZ_CHECK(!typed.ok(), it.key());
    FUZZ_CHECK(typed.status().message().starts_with(typed.field_path(it.key())),
               typed.status().message());
    break;
  }
  // Numbers of any kind read as integers either give the value or refuse with an error;
  // never anything undefined (a float far outside int64 must not be cast).
  for (auto it = doc.begin(); it != doc.end(); ++it) {
    if (!it.value().is_number()) continue;
    ObjectReader numbers(doc, "doc");
    const std::optional<int64_t> n = numbers.optional_int(it.key());
    FUZZ_CHECK(n.has_value() == numbers.ok(), it.key());
  }
}

}  // namespace
}  // namespace gf

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > gf::fuzz::kMaxInputBytes) return -1;
  const std::string_view text = gf::fuzz::as_text(data, size);
  const gf::Result<std::vector<gf::Json>> docs = gf::parse_documents(text);
  if (!docs.ok()) {
    FUZZ_CHECK_ERROR(docs.status());
    return 0;
  }
  for (const gf::Json& doc : *docs) {
    gf::check_yaml_round_trip(doc);
    gf::check_json_round_trip(doc);
    gf::check_reader(doc);
  }
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string_view::npos && text[first] != '{' && text[first] != '[') {
    // parse_documents took the YAML path: parse_yaml must agree on what one document is.
    const gf::Result<gf::Json> one = gf::parse_yaml(text);
    FUZZ_CHECK(one.ok() == (docs->size() == 1), one.status().to_string());
    FUZZ_CHECK(!one.ok() || *one == docs->front(), gf::fuzz::dump(*one));
  }
  return 0;
}
