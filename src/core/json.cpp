#include "core/json.h"

#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <limits>
#include <regex>

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

Json scalar_to_json(const YAML::Node& node) {
  const std::string& s = node.Scalar();
  if (node.Tag() == "!") return s;  // quoted: always a string
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
  if (is_yaml_float(s) && s != "." ) {
    // Keep numbers with exponents or decimals as text when they are integral quantities
    // such as 1e3 would lose nothing either way; JSON number is what a YAML reader expects.
    return std::strtod(s.c_str(), nullptr);
  }
  return s;
}

Json yaml_to_json(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      return nullptr;
    case YAML::NodeType::Scalar:
      return scalar_to_json(node);
    case YAML::NodeType::Sequence: {
      Json arr = Json::array();
      for (const auto& item : node) arr.push_back(yaml_to_json(item));
      return arr;
    }
    case YAML::NodeType::Map: {
      Json obj = Json::object();
      for (const auto& kv : node) obj[kv.first.as<std::string>()] = yaml_to_json(kv.second);
      return obj;
    }
  }
  return nullptr;
}

void json_to_yaml(YAML::Emitter& out, const Json& v) {
  switch (v.type()) {
    case Json::value_t::object:
      out << YAML::BeginMap;
      for (auto it = v.begin(); it != v.end(); ++it) {
        out << YAML::Key << it.key() << YAML::Value;
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
      // Quote strings a YAML reader would otherwise take for another type.
      bool needs_quotes = s.empty() || is_yaml_int(s) || is_yaml_float(s) || s == "true" ||
                          s == "false" || s == "null" || s == "~" || s == "yes" || s == "no";
      if (needs_quotes) out << YAML::DoubleQuoted;
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

Result<Json> parse_json(std::string_view text) {
  try {
    return Json::parse(text.begin(), text.end());
  } catch (const Json::parse_error& e) {
    return validation_error(std::string("malformed JSON: ") + e.what());
  }
}

Result<std::vector<Json>> parse_yaml_documents(std::string_view text) {
  try {
    std::vector<Json> docs;
    for (const YAML::Node& node : YAML::LoadAll(std::string(text))) {
      if (node.IsNull()) continue;
      docs.push_back(yaml_to_json(node));
    }
    return docs;
  } catch (const YAML::Exception& e) {
    return validation_error("malformed YAML at line " + std::to_string(e.mark.line + 1) +
                            ", column " + std::to_string(e.mark.column + 1) + ": " + e.msg);
  }
}

Result<Json> parse_yaml(std::string_view text) {
  GF_ASSIGN_OR_RETURN(auto docs, parse_yaml_documents(text));
  if (docs.empty()) return validation_error("empty YAML document");
  if (docs.size() > 1) return validation_error("expected one YAML document, got " + std::to_string(docs.size()));
  return docs.front();
}

Result<std::vector<Json>> parse_documents(std::string_view text) {
  size_t i = text.find_first_not_of(" \t\r\n");
  if (i == std::string_view::npos) return validation_error("empty request body");
  if (text[i] == '{' || text[i] == '[') {
    GF_ASSIGN_OR_RETURN(Json j, parse_json(text));
    return std::vector<Json>{std::move(j)};
  }
  return parse_yaml_documents(text);
}

std::string to_yaml(const Json& value) {
  YAML::Emitter out;
  json_to_yaml(out, value);
  return std::string(out.c_str()) + "\n";
}

std::string json_type_name(const Json& v) {
  switch (v.type()) {
    case Json::value_t::object: return "object";
    case Json::value_t::array: return "array";
    case Json::value_t::string: return "string";
    case Json::value_t::boolean: return "boolean";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned: return "integer";
    case Json::value_t::number_float: return "number";
    case Json::value_t::null: return "null";
    default: return "value";
  }
}

std::string describe_json_value(const Json& v) {
  if (v.is_object()) return "an object";
  if (v.is_array()) return "an array";
  std::string s = v.dump();
  if (s.size() > 60) s = s.substr(0, 57) + "...";
  return s;
}

std::string path_join(std::string_view base, std::string_view field) {
  if (base.empty()) return std::string(field);
  return std::string(base) + "." + std::string(field);
}

std::string path_index(std::string_view base, size_t index) {
  return std::string(base) + "[" + std::to_string(index) + "]";
}

ObjectReader::ObjectReader(const Json& value, std::string path)
    : value_(value), path_(std::move(path)) {
  if (!value_.is_object()) {
    status_ = validation_error((path_.empty() ? std::string("body") : path_) +
                               ": expected object, got " + describe_json_value(value_));
  }
}

bool ObjectReader::has(std::string_view key) const {
  if (!value_.is_object()) return false;
  auto it = value_.find(key);
  return it != value_.end() && !it->is_null();
}

const Json* ObjectReader::lookup(std::string_view key) {
  if (!ok()) return nullptr;
  read_.emplace(key);
  auto it = value_.find(key);
  if (it == value_.end() || it->is_null()) return nullptr;
  return &*it;
}

void ObjectReader::fail(std::string_view key, std::string message) {
  if (!ok()) return;
  status_ = validation_error(field_path(key) + ": " + message);
}

void ObjectReader::fail_status(const Status& status) {
  if (ok() && !status.ok()) status_ = status;
}

std::optional<std::string> ObjectReader::optional_string(std::string_view key) {
  const Json* v = lookup(key);
  if (!v) return std::nullopt;
  if (!v->is_string()) {
    fail(key, "expected string, got " + describe_json_value(*v));
    return std::nullopt;
  }
  return v->get<std::string>();
}

std::string ObjectReader::required_string(std::string_view key) {
  if (!ok()) return {};
  if (!has(key)) {
    fail(key, "is required");
    return {};
  }
  return optional_string(key).value_or("");
}

std::optional<int64_t> ObjectReader::optional_int(std::string_view key) {
  const Json* v = lookup(key);
  if (!v) return std::nullopt;
  if (v->is_number_integer()) {
    if (v->is_number_unsigned() &&
        v->get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      fail(key, "integer " + v->dump() + " is too large");
      return std::nullopt;
    }
    return v->get<int64_t>();
  }
  if (v->is_number_float()) {
    double d = v->get<double>();
    if (d == static_cast<double>(static_cast<int64_t>(d))) return static_cast<int64_t>(d);
  }
  fail(key, "expected integer, got " + describe_json_value(*v));
  return std::nullopt;
}

int64_t ObjectReader::required_int(std::string_view key) {
  if (!ok()) return 0;
  if (!has(key)) {
    fail(key, "is required");
    return 0;
  }
  return optional_int(key).value_or(0);
}

std::optional<bool> ObjectReader::optional_bool(std::string_view key) {
  const Json* v = lookup(key);
  if (!v) return std::nullopt;
  if (!v->is_boolean()) {
    fail(key, "expected boolean, got " + describe_json_value(*v));
    return std::nullopt;
  }
  return v->get<bool>();
}

const Json* ObjectReader::optional_value(std::string_view key) { return lookup(key); }

const Json* ObjectReader::required_value(std::string_view key) {
  const Json* v = lookup(key);
  if (!v) fail(key, "is required");
  return v;
}

const Json* ObjectReader::optional_object(std::string_view key) {
  const Json* v = lookup(key);
  if (v && !v->is_object()) {
    fail(key, "expected object, got " + describe_json_value(*v));
    return nullptr;
  }
  return v;
}

const Json* ObjectReader::optional_array(std::string_view key) {
  const Json* v = lookup(key);
  if (v && !v->is_array()) {
    fail(key, "expected array, got " + describe_json_value(*v));
    return nullptr;
  }
  return v;
}

std::optional<std::vector<std::string>> ObjectReader::optional_string_list(std::string_view key) {
  const Json* v = optional_array(key);
  if (!v) return std::nullopt;
  std::vector<std::string> out;
  for (size_t i = 0; i < v->size(); ++i) {
    const Json& item = (*v)[i];
    if (!item.is_string()) {
      fail_status(validation_error(path_index(field_path(key), i) + ": expected string, got " +
                                   describe_json_value(item)));
      return std::nullopt;
    }
    out.push_back(item.get<std::string>());
  }
  return out;
}

std::vector<std::string> ObjectReader::unknown_fields() const {
  std::vector<std::string> out;
  if (!value_.is_object()) return out;
  for (auto it = value_.begin(); it != value_.end(); ++it) {
    if (!read_.count(it.key())) out.push_back(field_path(it.key()));
  }
  return out;
}

}  // namespace gf
