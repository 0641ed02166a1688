#include "cli/command_support.h"

#include <fmt/format.h>

#include <sys/ioctl.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <iterator>

#include "core/clock.h"

namespace gf {

namespace {

constexpr int kRequestTimeoutSeconds = 60;
constexpr int kDefaultTerminalWidth = 80;

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

bool stdout_is_tty() { return ::isatty(STDOUT_FILENO) == 1; }

int terminal_width() {
  winsize ws{};
  if (::ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  return kDefaultTerminalWidth;
}

TableStyle terminal_style(const GlobalOptions& global, const OutputSpec& output) {
  TableStyle style;
  const bool tty = stdout_is_tty();
  const char* no_color = std::getenv("NO_COLOR");
  const bool color_env_off = no_color != nullptr && *no_color != '\0';
  style.color = global.color == "always" || (global.color == "auto" && tty && !color_env_off);
  style.wide = output.format == OutputFormat::kWide;
  style.width = tty && !style.wide ? terminal_width() : 0;
  return style;
}

void run_with_client(CLI::App* cmd, CommandContext& ctx, std::function<int(CommandEnv&)> body) {
  cmd->fallthrough();
  cmd->callback([&ctx, body = std::move(body)] {
    ctx.run = [&ctx, body] {
      auto output = parse_output(ctx.global.output);
      if (!output.ok()) return usage_error(output.status().message());
      set_table_style(terminal_style(ctx.global, *output));
      CommandEnv env{*output, Client(client_options(ctx.global, kRequestTimeoutSeconds))};
      const int rc = body(env);
      return rc == 0 && env.output_failed ? 1 : rc;
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
  if (Status st = print_structured(std::cout, answer, env.output); !st.ok()) {
    std::cerr << "error: " << st.message() << "\n";
    env.output_failed = true;
  }
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

Status check_time_flag(const std::string& flag, const std::string& text) {
  if (parse_duration(text).ok() || parse_iso8601(text).ok()) return ok_status();
  return validation_error(
      flag + ": expected a duration like 1h or a time like 2026-01-01T00:00:00Z, got \"" + text +
      "\"");
}

Time client_now() { return RealClock().now(); }

Time server_now(const Client& client) { return client.server_now().value_or(client_now()); }

std::string compact_count(const std::string& digits) {
  int64_t n = 0;
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
  if (ec != std::errc() || ptr != digits.data() + digits.size() || n < 1'000'000) return digits;
  int zeros = 0;
  while (n % 10 == 0) {
    n /= 10;
    ++zeros;
  }
  return n < 1000 ? fmt::format("{}e{}", n, zeros) : digits;
}

std::string format_age(Time created, Time now) {
  const int64_t s = std::max<int64_t>(0, (now - created).count() / 1000000);
  if (s < 120) return fmt::format("{}s", s);
  if (s < 7200) return fmt::format("{}m", s / 60);
  if (s < 172800) return fmt::format("{}h", s / 3600);
  return fmt::format("{}d", s / 86400);
}

std::string cluster_path(const std::string& cluster) {
  return "/v1/clusters/" + url_encode(cluster);
}

Status ListFlags::check() const {
  if (!sort_by.empty() && sort_by != "name" && sort_by != "creation-time")
    return validation_error("--sort-by: expected name or creation-time, got \"" + sort_by + "\"");
  if (!sort_order.empty() && sort_order != "ascending" && sort_order != "descending")
    return validation_error("--sort-order: expected ascending or descending, got \"" + sort_order +
                            "\"");
  if (!created_after.empty()) GF_RETURN_IF_ERROR(check_time_flag("--created-after", created_after));
  if (!created_before.empty())
    GF_RETURN_IF_ERROR(check_time_flag("--created-before", created_before));
  return ok_status();
}

void ListFlags::add_to(QueryString& query) const {
  query.add("SortBy", sort_by == "name" ? "NAME"
                      : sort_by.empty() ? ""
                                        : "CREATION_TIME")
      .add("SortOrder", sort_order == "descending" ? "Descending"
                        : sort_order.empty()       ? ""
                                                   : "Ascending")
      .add("CreationTimeAfter", created_after)
      .add("CreationTimeBefore", created_before);
}

void add_list_flags(CLI::App* cmd, ListFlags& flags) {
  cmd->add_option("--sort-by", flags.sort_by, "name or creation-time");
  cmd->add_option("--sort-order", flags.sort_order, "ascending (default) or descending");
  cmd->add_option("--created-after", flags.created_after,
                  "only those created after a duration ago (1h) or a time (ISO 8601)");
  cmd->add_option("--created-before", flags.created_before,
                  "only those created before a duration ago or a time");
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
    out << key << ":" << std::string(width - key.size() + 1, ' ')
        << terminal_safe(value, /*keep_lines=*/true) << "\n";
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
