#include "cli/command_support.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <iterator>

#include "core/clock.h"

namespace gf {

namespace {

constexpr int kRequestTimeoutSeconds = 60;

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

void run_with_client(CLI::App* cmd, CommandContext& ctx, std::function<int(CommandEnv&)> body) {
  cmd->fallthrough();
  cmd->callback([&ctx, body = std::move(body)] {
    ctx.run = [&ctx, body] {
      auto format = parse_output_format(ctx.global.output);
      if (!format.ok()) return usage_error(format.status().message());
      CommandEnv env{*format, Client(client_options(ctx.global, kRequestTimeoutSeconds))};
      return body(env);
    };
  });
}

int print_error(const Status& status) {
  std::cerr << "error: " << status.message() << "\n";
  return 1;
}

int usage_error(const std::string& message) {
  std::cerr << "error: " << message << "\n";
  return 2;
}

bool print_if_structured(const CommandEnv& env, const Json& answer) {
  if (!env.structured()) return false;
  print_structured(std::cout, answer, env.format);
  return true;
}

Result<std::string> read_input_file(const std::string& path) {
  if (path == "-") {
    return std::string(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  }
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return validation_error("-f: cannot read " + path + ": " + std::strerror(errno));
  std::string content;
  char buf[8192];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) content.append(buf, n);
  const bool failed = std::ferror(f) != 0;
  const int err = errno;
  std::fclose(f);
  if (failed) return validation_error("-f: cannot read " + path + ": " + std::strerror(err));
  return content;
}

std::string content_type_for(const std::string& path) {
  return ends_with(path, ".yaml") || ends_with(path, ".yml") ? "application/yaml"
                                                             : "application/json";
}

Result<Time> parse_time_flag(const std::string& flag, const std::string& text, Time now) {
  if (auto d = parse_duration(text); d.ok()) return now - *d;
  if (auto t = parse_iso8601(text); t.ok()) return *t;
  return validation_error(
      flag + ": expected a duration like 1h or a time like 2026-01-01T00:00:00Z, got \"" + text +
      "\"");
}

Time client_now() { return RealClock().now(); }

std::string cluster_path(const std::string& cluster) {
  return "/v1/clusters/" + url_encode(cluster);
}

QueryString& QueryString::add(std::string_view key, const std::string& value) {
  if (value.empty()) return *this;
  text_ += text_.empty() ? "?" : "&";
  text_.append(key);
  text_ += "=" + url_encode(value);
  return *this;
}

const Json& field(const Json& object, std::string_view key) {
  static const Json kNull;
  if (!object.is_object()) return kNull;
  auto it = object.find(key);
  return it == object.end() ? kNull : *it;
}

const Json& array_field(const Json& object, std::string_view key) {
  static const Json kEmpty = Json::array();
  const Json& v = field(object, key);
  return v.is_array() ? v : kEmpty;
}

std::string text_of(const Json& value) {
  if (value.is_null()) return "";
  if (value.is_string()) return value.get<std::string>();
  return value.dump();
}

std::string text_field(const Json& object, std::string_view key) {
  return text_of(field(object, key));
}

int64_t int_field(const Json& object, std::string_view key) {
  const Json& v = field(object, key);
  return v.is_number() ? v.get<int64_t>() : 0;
}

void print_fields(std::ostream& out, const Fields& fields) {
  size_t width = 0;
  for (const auto& [key, value] : fields) {
    if (!value.empty()) width = std::max(width, key.size());
  }
  for (const auto& [key, value] : fields) {
    if (value.empty()) continue;
    out << key << ":" << std::string(width - key.size() + 1, ' ') << value << "\n";
  }
}

std::string format_dollars(int64_t micros) {
  if (micros < 0) return "-" + format_dollars(-micros);
  const int64_t cents = (micros + 5'000) / 10'000;
  char buf[32];
  std::snprintf(buf, sizeof buf, "$%lld.%02lld", static_cast<long long>(cents / 100),
                static_cast<long long>(cents % 100));
  return buf;
}

int64_t parse_micros(const std::string& money) {
  const bool negative = !money.empty() && money[0] == '-';
  int64_t units = 0, fraction = 0;
  int fraction_digits = 0;
  bool in_fraction = false;
  for (size_t i = negative ? 1 : 0; i < money.size(); ++i) {
    const char c = money[i];
    if (c == '.' && !in_fraction) {
      in_fraction = true;
    } else if (c < '0' || c > '9') {
      return 0;
    } else if (!in_fraction) {
      units = units * 10 + (c - '0');
    } else if (fraction_digits < 6) {
      fraction = fraction * 10 + (c - '0');
      ++fraction_digits;
    }
  }
  for (; fraction_digits < 6; ++fraction_digits) fraction *= 10;
  const int64_t micros = units * 1'000'000 + fraction;
  return negative ? -micros : micros;
}

}  // namespace gf
