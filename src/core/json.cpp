#include "core/json.h"

#include <fmt/format.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/parser.h>
#include <yaml-cpp/yaml.h>
#include <yaml.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>

namespace gf {

namespace {

bool is_yaml_int(const std::string& s) {
  static const std::regex re(R"([-+]?[0-9]+)");
  return std::regex_match(s, re);
}
bool is_yaml_float(const std::string& s) {
  static const std::regex re(R"([-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?)");
  return std::regex_match(s, re);
}

Json scalar_to_json(const std::string& tag, const std::string& s) {
  if (tag == "!") return s;  // quoted: always a string
  if (s == "null" || s == "Null" || s == "NULL" || s == "~" || s.empty()) return nullptr;
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  if (is_yaml_int(s)) {
    errno = 0;
    char* end = nullptr;
    long long v = std::strtoll(s.c_str(), &end, 10);
    if (errno == 0 && end && *end == '\0') return static_cast<int64_t>(v);
    return s;  // too large for int64: keep the text, quantity parsing decides
  }
  if (is_yaml_float(s) && s != ".") {
    // Keep numbers with exponents or decimals as text when they are integral quantities
    // such as 1e3 would lose nothing either way; JSON number is what a YAML reader expects.
    const double d = std::strtod(s.c_str(), nullptr);
    if (!std::isfinite(d)) return s;  // 1e400: keep the text; the field's reader refuses it
    return d;
  }
  return s;
}

// U+FFFE and U+FFFF are Unicode noncharacters that YAML cannot carry: a YAML reader refuses them
// and yaml-cpp's writer replaces them, so a value holding one could never be shown or read back
// as YAML. Input that decodes to one is refused (docs/api.md, "Text").
bool raw_noncharacter(std::string_view s) {
  for (size_t at = s.find('\xEF'); at != std::string_view::npos && at + 2 < s.size();
       at = s.find('\xEF', at + 1)) {
    if (s[at + 1] == '\xBF' && (s[at + 2] == '\xBE' || s[at + 2] == '\xBF')) return true;
  }
  return false;
}

constexpr std::string_view kNoncharacterRefused =
    "holds U+FFFE or U+FFFF, a Unicode noncharacter, which is not allowed in text";

// The first string or key holding a noncharacter, as "a key" / "a string", or "".
std::string find_noncharacter(const Json& j) {
  if (j.is_string()) return raw_noncharacter(j.get_ref<const std::string&>()) ? "a string" : "";
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) {
      if (raw_noncharacter(it.key())) return "a key";
      if (std::string w = find_noncharacter(it.value()); !w.empty()) return w;
    }
  } else if (j.is_array()) {
    for (const Json& item : j) {
      if (std::string w = find_noncharacter(item); !w.empty()) return w;
    }
  }
  return "";
}

// Builds JSON straight from yaml-cpp's parser events, one document at a time, under a budget.
// Aliases are expanded here (each copy charged in full), so a "billion laughs" stops at the limit
// instead of after it was built; nesting is bounded by the limit, not by the stack.
class JsonBuilder : public YAML::EventHandler {
 public:
  explicit JsonBuilder(const ParseLimits& limits) : limits_(limits) {}

  // Thrown from an event to stop the parser; parse_yaml_documents answers it.
  struct Refused {
    Status status;
  };

  void OnDocumentStart(const YAML::Mark& mark) override {
    start = mark;
    root = Json();
    stack_.clear();
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    add(mark, nullptr, nullptr, anchor, 1);
  }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    auto it = anchors_.find(anchor);
    if (it == anchors_.end()) refuse(mark, "an alias names no anchor");
    charge(mark, it->second.nodes, it->second.bytes);
    // A copy of a nested node nests as deep as the node itself, wherever the alias stands.
    if (static_cast<int>(stack_.size()) + it->second.height > limits_.max_depth) {
      refuse(mark, fmt::format("nesting is deeper than the limit of {} levels (an alias repeats a "
                               "nested node deeper down)",
                               limits_.max_depth));
    }
    add(mark, it->second.value, nullptr, YAML::NullAnchor, 0, it->second.nodes, it->second.bytes,
        it->second.height);
  }
  void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                const std::string& value) override {
    charge(mark, 1, value.size());
    if (!limits_.allow_noncharacters && raw_noncharacter(value))
      refuse(mark, std::string("a scalar ") + std::string(kNoncharacterRefused));
    add(mark, scalar_to_json(tag, value), &value, anchor, 0, 1, value.size());
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    open(mark, Json::array(), anchor);
  }
  void OnSequenceEnd() override { close(); }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    open(mark, Json::object(), anchor);
  }
  void OnMapEnd() override { close(); }

  YAML::Mark start;  // where the current document started
  Json root;

 private:
  struct Frame {
    Json value;
    YAML::anchor_t anchor;
    std::optional<std::string> key;  // a mapping's key waiting for its value
    size_t nodes = 1;
    size_t bytes = 0;
    int height = 1;  // levels of nesting from this node down: 1 + its deepest child's
  };
  struct Anchored {
    Json value;
    size_t nodes;
    size_t bytes;
    int height;  // 0 for a scalar
  };

  [[noreturn]] static void refuse(const YAML::Mark& mark, const std::string& why) {
    throw Refused{validation_error(fmt::format("malformed YAML at line {}, column {}: {}",
                                               mark.line + 1, mark.column + 1, why))};
  }
  void charge(const YAML::Mark& mark, size_t nodes, size_t bytes) {
    nodes_ += nodes;
    bytes_ += bytes;
    if (nodes_ > limits_.max_nodes) {
      refuse(mark, fmt::format("the document expands to more than {} values (YAML aliases that "
                               "repeat a large node?)",
                               limits_.max_nodes));
    }
    if (bytes_ > limits_.max_scalar_bytes) {
      refuse(mark, fmt::format("the document expands to more than {} MiB of text (YAML aliases "
                               "that repeat a large node?)",
                               limits_.max_scalar_bytes >> 20));
    }
  }
  void open(const YAML::Mark& mark, Json value, YAML::anchor_t anchor) {
    if (static_cast<int>(stack_.size()) >= limits_.max_depth) {
      refuse(mark, fmt::format("nesting is deeper than the limit of {} levels", limits_.max_depth));
    }
    charge(mark, 1, 0);
    if (!stack_.empty() && stack_.back().value.is_object() && !stack_.back().key) {
      refuse(mark, "a mapping key must be a plain value");
    }
    stack_.push_back(Frame{std::move(value), anchor, std::nullopt});
  }
  void close() {
    Frame f = std::move(stack_.back());
    stack_.pop_back();
    add(YAML::Mark(), std::move(f.value), nullptr, f.anchor, 0, f.nodes, f.bytes, f.height);
  }
  // Places a finished value: the document's root, an item, a key (`text`: the scalar as written)
  // or a key's value. `charged`: values already counted (a null is counted here). `height`:
  // the value's levels of nesting (0 for a scalar).
  void add(const YAML::Mark& mark, Json value, const std::string* text, YAML::anchor_t anchor,
           size_t charged, size_t nodes = 1, size_t bytes = 0, int height = 0) {
    if (charged) charge(mark, charged, 0);
    if (anchor != YAML::NullAnchor) anchors_[anchor] = Anchored{value, nodes, bytes, height};
    if (stack_.empty()) {
      root = std::move(value);
      return;
    }
    Frame& top = stack_.back();
    top.nodes += nodes;
    top.bytes += bytes;
    top.height = std::max(top.height, height + 1);
    if (top.value.is_array()) {
      top.value.push_back(std::move(value));
    } else if (!top.key) {
      if (!text) refuse(mark, "a mapping key must be a plain value");
      if (!limits_.allow_duplicate_keys && top.value.contains(*text))
        refuse(mark, "the key \"" + printable(*text, 80) + "\" appears twice in one mapping");
      top.key = *text;
    } else {
      top.value[*top.key] = std::move(value);
      top.key.reset();
    }
  }

  const ParseLimits& limits_;
  size_t nodes_ = 0;
  size_t bytes_ = 0;
  std::vector<Frame> stack_;
  std::map<YAML::anchor_t, Anchored> anchors_;
};

// Characters yaml-cpp writes raw that do not read back as written: DEL and the C1 controls
// (U+0080-U+009F) are not printable YAML (DEL is written raw even inside double quotes); NEL
// (U+0085), LINE and PARAGRAPH SEPARATOR (U+2028, U+2029) are line breaks to a YAML 1.1 reader;
// U+FEFF is a byte order mark.
bool has_unprintable(const std::string& s) {
  for (size_t i = 0; i < s.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c == 0x7F) return true;
    if (c == 0xC2 && i + 1 < s.size()) {
      const unsigned char next = static_cast<unsigned char>(s[i + 1]);
      if (next >= 0x80 && next <= 0x9F) return true;
    }
    if ((c == 0xE2 || c == 0xEF) && i + 2 < s.size()) {
      const unsigned char b1 = static_cast<unsigned char>(s[i + 1]);
      const unsigned char b2 = static_cast<unsigned char>(s[i + 2]);
      if (c == 0xE2 && b1 == 0x80 && (b2 == 0xA8 || b2 == 0xA9)) return true;
      if (c == 0xEF && b1 == 0xBB && b2 == 0xBF) return true;
    }
  }
  return false;
}

// Double quotes with every non-ASCII character escaped (\x7f, \x85, \u00e9) for a scalar that
// holds unprintable characters; the setting applies to the next scalar only.
void escape_if_unprintable(YAML::Emitter& out, const std::string& s) {
  if (has_unprintable(s)) out << YAML::EscapeNonAscii << YAML::DoubleQuoted;
}

// Whether a string (a value or a key) must be written double-quoted to read back as the same
// string: one a YAML reader would otherwise take for another type (the reader's own rule,
// scalar_to_json, so every spelling of a boolean, null or number such as "FALSE", "Null",
// "1e400"; "yes"/"no" are booleans to YAML 1.1 readers); one with a CR, which yaml-cpp writes
// plain and which then reads back as a line break ("a\r" became "a"); and one that starts like
// a document marker, which ends the document when written plain at its start ("..." and the key
// "... sel" read back as no document at all).
bool needs_double_quotes(const std::string& s) {
  return !scalar_to_json("?", s).is_string() || is_yaml_int(s) || is_yaml_float(s) || s == "yes" ||
         s == "no" || s.find('\r') != std::string::npos || s.starts_with("---") ||
         s.starts_with("...");
}

void json_to_yaml(YAML::Emitter& out, const Json& v) {
  switch (v.type()) {
    case Json::value_t::object:
      out << YAML::BeginMap;
      for (auto it = v.begin(); it != v.end(); ++it) {
        const std::string& key = it.key();
        // A YAML reader refuses an implicit key longer than 1024 characters, and escaping can
        // make a key several times longer than its bytes: long keys use the explicit `? key`
        // form. A CR in a plain key would read back as a line break.
        if (key.size() > 128) out << YAML::LongKey;
        out << YAML::Key;
        if (needs_double_quotes(key)) out << YAML::DoubleQuoted;
        escape_if_unprintable(out, key);
        out << key << YAML::Value;
        json_to_yaml(out, it.value());
      }
      out << YAML::EndMap;
      break;
    case Json::value_t::array:
      out << YAML::BeginSeq;
      for (const auto& item : v) json_to_yaml(out, item);
      out << YAML::EndSeq;
      break;
    case Json::value_t::string: {
      const std::string& s = v.get_ref<const std::string&>();
      if (needs_double_quotes(s)) out << YAML::DoubleQuoted;
      escape_if_unprintable(out, s);
      out << s;
      break;
    }
    case Json::value_t::boolean:
      out << v.get<bool>();
      break;
    case Json::value_t::number_integer:
      out << v.get<int64_t>();
      break;
    case Json::value_t::number_unsigned:
      out << v.get<uint64_t>();
      break;
    case Json::value_t::number_float:
      out << v.get<double>();
      break;
    default:
      out << YAML::Null;
  }
}

}  // namespace

int json_nesting_depth(std::string_view text, int stop_above) {
  int depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
      if (deepest > stop_above) return deepest;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return deepest;
}

size_t find_invalid_utf8(std::string_view text) {
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  size_t i = 0;
  while (i < n) {
    const unsigned char c = p[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t len = 0;
    uint32_t cp = 0;
    if (c >= 0xC2 && c <= 0xDF) {
      len = 2, cp = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
      len = 3, cp = c & 0x0F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4, cp = c & 0x07;
    } else {
      return i;
    }
    if (i + len > n) return i;
    for (size_t k = 1; k < len; ++k) {
      if ((p[i + k] & 0xC0) != 0x80) return i;
      cp = (cp << 6) | (p[i + k] & 0x3F);
    }
    // Overlong forms, UTF-16 surrogates and code points past U+10FFFF are ill-formed.
    if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ||
        (cp >= 0xD800 && cp <= 0xDFFF)) {
      return i;
    }
    i += len;
  }
  return std::string_view::npos;
}

bool has_noncharacter(std::string_view text) { return raw_noncharacter(text); }

std::string printable(std::string_view text, size_t max_bytes) {
  std::string out;
  size_t i = 0;
  while (i < text.size() && out.size() < max_bytes) {
    const size_t bad = find_invalid_utf8(text.substr(i, std::min<size_t>(4, text.size() - i)));
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (bad == 0) {
      out += "\xEF\xBF\xBD";
      ++i;
    } else if (c < 0x20 && c != '\t' && c != '\n') {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\x%02X", c);
      out += buf;
      ++i;
    } else {
      // One whole (valid) character.
      size_t len = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
      out.append(text.substr(i, len));
      i += len;
    }
  }
  if (i < text.size()) out += "...";
  return out;
}

Result<Duration> read_bounded_duration(const Json& v, Duration max) {
  const std::string too_long = fmt::format("must be at most {}d", max / days(1));
  if (v.is_number_integer()) {
    if (!v.is_number_unsigned() && v.get<int64_t>() < 0)
      return validation_error("must not be negative");
    // Checked as a count of seconds: seconds(n) itself overflows for a large n.
    if (v.get<uint64_t>() > static_cast<uint64_t>(max / seconds(1)))
      return validation_error(too_long);
    return seconds(v.get<int64_t>());
  }
  if (!v.is_string()) {
    return validation_error("expected a duration such as \"30m\" or a number of seconds, got " +
                            describe_json_value(v));
  }
  GF_ASSIGN_OR_RETURN(Duration d, parse_duration(v.get_ref<const std::string&>()));
  if (d < Duration::zero()) return validation_error("must not be negative");
  if (d > max) return validation_error(too_long);
  return d;
}

std::string safe_dump(const Json& value, int indent) {
  return value.dump(indent, ' ', false, Json::error_handler_t::replace);
}

namespace {

struct DuplicateKey {
  std::string key;
};

// nlohmann's parser with a callback that keeps the keys of every open object: a key seen twice
// in one object throws DuplicateKey.
Json parse_refusing_duplicate_keys(std::string_view text) {
  std::vector<std::set<std::string, std::less<>>> open;
  return Json::parse(
      text.begin(), text.end(), [&open](int, Json::parse_event_t event, Json& parsed) {
        switch (event) {
          case Json::parse_event_t::object_start:
            open.emplace_back();
            break;
          case Json::parse_event_t::object_end:
            if (!open.empty()) open.pop_back();
            break;
          case Json::parse_event_t::key:
            if (!open.empty() && !open.back().insert(parsed.get<std::string>()).second)
              throw DuplicateKey{parsed.get<std::string>()};
            break;
          default:
            break;
        }
        return true;
      });
}

}  // namespace

Result<Json> parse_json(std::string_view text, const ParseLimits& limits) {
  if (json_nesting_depth(text, limits.max_depth) > limits.max_depth) {
    return validation_error(fmt::format(
        "malformed JSON: nesting is deeper than the limit of {} levels", limits.max_depth));
  }
  try {
    Json j = limits.allow_duplicate_keys ? Json::parse(text.begin(), text.end())
                                         : parse_refusing_duplicate_keys(text);
    // Only an escape (\uFFFF) or the raw bytes can decode to a noncharacter: most texts skip
    // the walk.
    if (!limits.allow_noncharacters &&
        (text.find("\\u") != std::string_view::npos || raw_noncharacter(text))) {
      if (std::string where = find_noncharacter(j); !where.empty()) {
        return validation_error("malformed JSON: " + where + " " +
                                std::string(kNoncharacterRefused));
      }
    }
    return j;
  } catch (const DuplicateKey& d) {
    return validation_error("malformed JSON: the key \"" + printable(d.key, 80) +
                            "\" appears twice in one object");
  } catch (const Json::out_of_range& e) {
    // nlohmann's message names the number ("number overflow parsing '1e400'").
    return validation_error(std::string("malformed JSON: a number is out of range (") +
                            printable(e.what(), 120) + ")");
  } catch (const Json::exception& e) {
    return validation_error(std::string("malformed JSON: ") + printable(e.what(), 300));
  }
}

namespace {

// yaml-cpp 0.7 loops for ever, allocating, on some malformed texts (a document that starts with
// `,` such as ",a"), so every text is first checked by libyaml's parser, which is iterative and
// well fuzzed: it refuses malformed YAML with a line and column, and nesting deeper than the limit
// is refused here before yaml-cpp's recursive parser sees it.
Status check_yaml_syntax(std::string_view text, int max_depth) {
  yaml_parser_t parser;
  if (!yaml_parser_initialize(&parser)) return internal_error("YAML parser: out of memory");
  yaml_parser_set_input_string(&parser, reinterpret_cast<const unsigned char*>(text.data()),
                               text.size());
  Status result;
  int depth = 0;
  for (bool done = false; !done;) {
    yaml_event_t event;
    if (!yaml_parser_parse(&parser, &event)) {
      result = validation_error(
          fmt::format("malformed YAML at line {}, column {}: {}", parser.problem_mark.line + 1,
                      parser.problem_mark.column + 1,
                      printable(parser.problem ? parser.problem : "syntax error", 200)));
      break;
    }
    if (event.type == YAML_SEQUENCE_START_EVENT || event.type == YAML_MAPPING_START_EVENT) {
      if (++depth > max_depth) {
        result = validation_error(
            fmt::format("malformed YAML at line {}: nesting is deeper than the limit of {} levels",
                        event.start_mark.line + 1, max_depth));
      }
    } else if (event.type == YAML_SEQUENCE_END_EVENT || event.type == YAML_MAPPING_END_EVENT) {
      --depth;
    }
    done = event.type == YAML_STREAM_END_EVENT || !result.ok();
    yaml_event_delete(&event);
  }
  yaml_parser_delete(&parser);
  return result;
}

}  // namespace

Result<std::vector<Json>> parse_yaml_documents(std::string_view text, const ParseLimits& limits) {
  GF_RETURN_IF_ERROR(check_yaml_syntax(text, limits.max_depth));
  try {
    std::vector<Json> docs;
    std::istringstream in{std::string(text)};
    YAML::Parser parser(in);
    JsonBuilder builder(limits);
    std::optional<YAML::Mark> previous;
    while (parser.HandleNextDocument(builder)) {
      // yaml-cpp 0.7 can report the same document again and again without reading on (inputs
      // such as "! a\n,n"): a document that starts where the last one did ends the text.
      if (previous && previous->pos == builder.start.pos) {
        return validation_error(fmt::format(
            "malformed YAML at line {}, column {}: the parser cannot read past this point",
            builder.start.line + 1, builder.start.column + 1));
      }
      previous = builder.start;
      if (builder.root.is_null()) continue;
      docs.push_back(std::move(builder.root));
    }
    return docs;
  } catch (const JsonBuilder::Refused& r) {
    return r.status;
  } catch (const YAML::Exception& e) {
    return validation_error(fmt::format("malformed YAML at line {}, column {}: {}", e.mark.line + 1,
                                        e.mark.column + 1, printable(e.msg, 200)));
  } catch (const std::exception& e) {
    return validation_error(std::string("malformed YAML: ") + printable(e.what(), 200));
  }
}

Result<Json> parse_yaml(std::string_view text, const ParseLimits& limits) {
  GF_ASSIGN_OR_RETURN(auto docs, parse_yaml_documents(text, limits));
  if (docs.empty()) return validation_error("empty YAML document");
  if (docs.size() > 1)
    return validation_error(fmt::format("expected one YAML document, got {}", docs.size()));
  return docs.front();
}

Result<std::vector<Json>> parse_documents(std::string_view text, const ParseLimits& limits) {
  size_t i = text.find_first_not_of(" \t\r\n");
  if (i == std::string_view::npos) return validation_error("empty request body");
  if (text[i] == '{' || text[i] == '[') {
    GF_ASSIGN_OR_RETURN(Json j, parse_json(text, limits));
    return std::vector<Json>{std::move(j)};
  }
  return parse_yaml_documents(text, limits);
}

std::string to_yaml(const Json& value) {
  YAML::Emitter out;
  json_to_yaml(out, value);
  return std::string(out.c_str()) + "\n";
}

std::string json_type_name(const Json& v) {
  switch (v.type()) {
    case Json::value_t::object:
      return "object";
    case Json::value_t::array:
      return "array";
    case Json::value_t::string:
      return "string";
    case Json::value_t::boolean:
      return "boolean";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
      return "integer";
    case Json::value_t::number_float:
      return "number";
    case Json::value_t::null:
      return "null";
    default:
      return "value";
  }
}

std::string describe_json_value(const Json& v) {
  if (v.is_object()) return "an object";
  if (v.is_array()) return "an array";
  std::string s = safe_dump(v);
  if (s.size() > 60) s = printable(s, 57);
  return s;
}

}  // namespace gf
