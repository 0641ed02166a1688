#include "core/jsonpath.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <variant>

namespace gf::jsonpath {

namespace {

// ---- paths ----------------------------------------------------------------------------------

struct Path;

enum class Op { kHas, kEq, kNe, kLt, kLe, kGt, kGe };

struct Filter {
  std::shared_ptr<const Path> path;  // relative to @
  Op op = Op::kHas;
  Json literal;
};

struct Step {
  enum Kind { kField, kWildcard, kIndex, kSlice, kFilter, kDescend } kind = kField;
  std::string name;  // kField; kDescend ("" = every descendant)
  int64_t index = 0;
  std::optional<int64_t> from, to;
  int64_t stride = 1;
  Filter filter;
};

struct Path {
  std::vector<Step> steps;
};

// ---- templates ------------------------------------------------------------------------------

struct Node {
  enum Kind { kText, kValues, kRange } kind = kText;
  std::string text;               // kText (and a literal action)
  std::vector<Path> union_paths;  // kValues; kRange uses the first
  std::vector<Node> body;         // kRange
};

}  // namespace

struct Template {
  std::vector<Node> nodes;
};

namespace {

class Parser {
 public:
  explicit Parser(std::string_view text) : s_(text) {}

  Status error(std::string_view what) const {
    return validation_error(
        fmt::format("jsonpath: {} at offset {} of \"{}\"", what, pos_, printable(s_, 120)));
  }

  bool done() const { return pos_ >= s_.size(); }
  char peek(size_t ahead = 0) const { return pos_ + ahead < s_.size() ? s_[pos_ + ahead] : '\0'; }
  void skip_blanks() {
    while (!done() && (peek() == ' ' || peek() == '\t')) ++pos_;
  }
  bool eat(char c) {
    if (peek() != c) return false;
    ++pos_;
    return true;
  }
  size_t pos() const { return pos_; }
  void set_pos(size_t p) { pos_ = p; }
  std::string_view rest() const { return s_.substr(std::min(pos_, s_.size())); }

  // A quoted string at pos ('…' or "…") with \n \t \\ \" \' escapes.
  Result<std::string> quoted() {
    const char q = peek();
    ++pos_;
    std::string out;
    while (!done() && peek() != q) {
      char c = s_[pos_++];
      if (c == '\\' && !done()) {
        const char e = s_[pos_++];
        c = e == 'n' ? '\n' : e == 't' ? '\t' : e == 'r' ? '\r' : e;
      }
      out += c;
    }
    if (!eat(q)) return error("unterminated string");
    return out;
  }

  Result<int64_t> integer() {
    const size_t start = pos_;
    if (peek() == '-') ++pos_;
    while (!done() && peek() >= '0' && peek() <= '9') ++pos_;
    const std::string_view digits = s_.substr(start, pos_ - start);
    if (digits.empty() || digits == "-" || digits.size() > 18) {
      pos_ = start;
      return error("expected an integer");
    }
    return std::stoll(std::string(digits));
  }

  // A field name after '.': up to '.', '[', ',', ')', a blank, a comparison or the end.
  std::string name() {
    const size_t start = pos_;
    while (!done() && std::string_view(".[],)}= \t!<>").find(peek()) == std::string_view::npos)
      ++pos_;
    return std::string(s_.substr(start, pos_ - start));
  }

  Result<Json> literal() {
    skip_blanks();
    if (peek() == '"' || peek() == '\'') {
      GF_ASSIGN_OR_RETURN(std::string q, quoted());
      return Json(q);
    }
    for (auto [word, value] : {std::pair<std::string_view, Json>{"true", Json(true)},
                               {"false", Json(false)},
                               {"null", Json(nullptr)}}) {
      if (rest().starts_with(word)) {
        pos_ += word.size();
        return value;
      }
    }
    const size_t start = pos_;
    while (!done() && std::string_view("-+.eE0123456789").find(peek()) != std::string_view::npos)
      ++pos_;
    auto number = parse_json(s_.substr(start, pos_ - start));
    if (start == pos_ || !number.ok() || !number->is_number()) {
      pos_ = start;
      return error("expected a string, number, true, false or null");
    }
    return *number;
  }

  Result<Filter> filter(int depth) {
    // at "?(" already consumed
    skip_blanks();
    if (!eat('@')) return error("a filter starts with @");
    GF_ASSIGN_OR_RETURN(Path p, path(depth + 1, /*relative=*/true));
    Filter f;
    f.path = std::make_shared<const Path>(std::move(p));
    skip_blanks();
    static constexpr std::pair<std::string_view, Op> kOps[] = {{"==", Op::kEq}, {"!=", Op::kNe},
                                                               {"<=", Op::kLe}, {">=", Op::kGe},
                                                               {"<", Op::kLt},  {">", Op::kGt}};
    for (auto [text, op] : kOps) {
      if (rest().starts_with(text)) {
        pos_ += text.size();
        f.op = op;
        GF_ASSIGN_OR_RETURN(f.literal, literal());
        break;
      }
    }
    skip_blanks();
    if (!eat(')')) return error("expected ) to close the filter");
    return f;
  }

  Result<Step> bracket(int depth) {
    // at '[' already consumed
    skip_blanks();
    Step step;
    if (eat('*')) {
      step.kind = Step::kWildcard;
    } else if (peek() == '\'' || peek() == '"') {
      step.kind = Step::kField;
      GF_ASSIGN_OR_RETURN(step.name, quoted());
    } else if (peek() == '?' && peek(1) == '(') {
      pos_ += 2;
      step.kind = Step::kFilter;
      GF_ASSIGN_OR_RETURN(step.filter, filter(depth));
    } else {
      std::optional<int64_t> first;
      if (peek() != ':') {
        GF_ASSIGN_OR_RETURN(int64_t i, integer());
        first = i;
      }
      skip_blanks();
      if (peek() == ':') {
        step.kind = Step::kSlice;
        step.from = first;
        ++pos_;
        skip_blanks();
        if (peek() != ':' && peek() != ']') {
          GF_ASSIGN_OR_RETURN(int64_t to, integer());
          step.to = to;
        }
        if (eat(':')) {
          GF_ASSIGN_OR_RETURN(step.stride, integer());
          if (step.stride <= 0) return error("a slice step must be positive");
        }
      } else {
        step.kind = Step::kIndex;
        step.index = *first;
      }
    }
    skip_blanks();
    if (!eat(']')) return error("expected ]");
    return step;
  }

  // A path: optional $ or @, then .name, ..name, .*, [..] steps. Stops at ',', ')', '}', a blank
  // or a comparison.
  Result<Path> path(int depth, bool relative = false) {
    if (depth > kMaxNesting) return error("nested too deep");
    Path p;
    if (!relative && (peek() == '$' || peek() == '@')) ++pos_;
    while (!done()) {
      if (rest().starts_with("..")) {
        pos_ += 2;
        Step step;
        step.kind = Step::kDescend;
        if (eat('*')) {
          step.name = "";
        } else if (peek() == '[') {
          p.steps.push_back(step);  // ..[…]: every descendant, then the bracket
          continue;
        } else {
          step.name = name();
          if (step.name.empty()) return error("expected a name after ..");
        }
        p.steps.push_back(std::move(step));
      } else if (eat('.')) {
        Step step;
        if (eat('*')) {
          step.kind = Step::kWildcard;
        } else {
          step.name = name();
          if (step.name.empty()) {
            if (done() || peek() == '}' || peek() == ',') continue;  // "{.}" = the value itself
            return error("expected a name after .");
          }
        }
        p.steps.push_back(std::move(step));
      } else if (eat('[')) {
        GF_ASSIGN_OR_RETURN(Step step, bracket(depth));
        p.steps.push_back(std::move(step));
      } else {
        break;
      }
    }
    return p;
  }

 private:
  std::string_view s_;
  size_t pos_ = 0;
};

// The text of one action, from after '{' to its matching '}' (braces inside quotes are text).
Result<std::string_view> action_text(Parser& p, std::string_view all) {
  const size_t start = p.pos();
  char quote = 0;
  for (size_t i = start; i < all.size(); ++i) {
    const char c = all[i];
    if (quote) {
      if (c == '\\') {
        ++i;
      } else if (c == quote) {
        quote = 0;
      }
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '}') {
      p.set_pos(i + 1);
      return all.substr(start, i - start);
    }
  }
  return p.error("expected } to close the action");
}

Result<Node> parse_action(std::string_view inner) {
  Parser p(inner);
  p.skip_blanks();
  Node node;
  if (p.peek() == '"' || p.peek() == '\'') {
    GF_ASSIGN_OR_RETURN(node.text, p.quoted());
    p.skip_blanks();
    if (!p.done()) return p.error("unexpected text after the literal");
    return node;
  }
  node.kind = Node::kValues;
  if (p.rest().starts_with("range ") || p.rest().starts_with("range\t")) {
    node.kind = Node::kRange;
    p.set_pos(p.pos() + 6);
    p.skip_blanks();
  }
  while (true) {
    p.skip_blanks();
    GF_ASSIGN_OR_RETURN(Path path, p.path(0));
    node.union_paths.push_back(std::move(path));
    p.skip_blanks();
    if (node.kind == Node::kValues && p.eat(',')) continue;
    break;
  }
  if (!p.done()) return p.error("unexpected text in the path");
  return node;
}

Result<Template> parse_template(std::string_view text) {
  if (text.size() > kMaxTemplateBytes) {
    return validation_error(fmt::format("jsonpath: the template is {} bytes; at most {}",
                                        text.size(), kMaxTemplateBytes));
  }
  Template t;
  std::vector<std::vector<Node>*> open{&t.nodes};  // the range bodies being filled
  Parser p(text);
  std::string literal;
  auto flush = [&] {
    if (literal.empty()) return;
    Node n;
    n.text = std::move(literal);
    literal.clear();
    open.back()->push_back(std::move(n));
  };
  while (!p.done()) {
    if (!p.eat('{')) {
      literal += p.peek();
      p.set_pos(p.pos() + 1);
      continue;
    }
    flush();
    GF_ASSIGN_OR_RETURN(std::string_view inner, action_text(p, text));
    std::string_view trimmed = inner;
    while (!trimmed.empty() && trimmed.front() == ' ') trimmed.remove_prefix(1);
    while (!trimmed.empty() && trimmed.back() == ' ') trimmed.remove_suffix(1);
    if (trimmed == "end") {
      if (open.size() == 1) return p.error("{end} without {range}");
      open.pop_back();
      continue;
    }
    GF_ASSIGN_OR_RETURN(Node node, parse_action(inner));
    const bool range = node.kind == Node::kRange;
    open.back()->push_back(std::move(node));
    if (range) {
      if (static_cast<int>(open.size()) > kMaxNesting) return p.error("ranges nested too deep");
      open.push_back(&open.back()->back().body);
    }
  }
  flush();
  if (open.size() != 1) return p.error("{range} without {end}");
  return t;
}

// ---- evaluation -----------------------------------------------------------------------------

std::vector<const Json*> apply(const Path& path, const Json& root, const Json& current);

bool compare(const Json& a, Op op, const Json& b) {
  if (op == Op::kEq) return a == b;
  if (op == Op::kNe) return a != b;
  const bool numbers = a.is_number() && b.is_number();
  const bool strings = a.is_string() && b.is_string();
  if (!numbers && !strings) return false;
  const bool less =
      numbers ? a.get<double>() < b.get<double>() : a.get<std::string>() < b.get<std::string>();
  const bool equal =
      numbers ? a.get<double>() == b.get<double>() : a.get<std::string>() == b.get<std::string>();
  switch (op) {
    case Op::kLt:
      return less;
    case Op::kLe:
      return less || equal;
    case Op::kGt:
      return !less && !equal;
    case Op::kGe:
      return !less;
    default:
      return false;
  }
}

bool matches(const Filter& f, const Json& root, const Json& item) {
  const std::vector<const Json*> found = apply(*f.path, root, item);
  if (f.op == Op::kHas) return !found.empty();
  return std::any_of(found.begin(), found.end(),
                     [&](const Json* v) { return compare(*v, f.op, f.literal); });
}

// Every value below `from` (itself included), depth first, in document order.
void descendants(const Json& from, std::vector<const Json*>& out) {
  std::vector<const Json*> stack{&from};
  while (!stack.empty()) {
    const Json* j = stack.back();
    stack.pop_back();
    out.push_back(j);
    if (j->is_structured()) {
      std::vector<const Json*> children;
      for (const Json& c : *j) children.push_back(&c);
      for (auto it = children.rbegin(); it != children.rend(); ++it) stack.push_back(*it);
    }
  }
}

void apply_step(const Step& step, const Json& root, const Json& j, std::vector<const Json*>& out) {
  switch (step.kind) {
    case Step::kField:
      if (j.is_object()) {
        if (auto it = j.find(step.name); it != j.end()) out.push_back(&*it);
      }
      break;
    case Step::kWildcard:
      if (j.is_structured()) {
        for (const Json& c : j) out.push_back(&c);
      }
      break;
    case Step::kIndex:
      if (j.is_array()) {
        const int64_t n = static_cast<int64_t>(j.size());
        const int64_t i = step.index < 0 ? n + step.index : step.index;
        if (i >= 0 && i < n) out.push_back(&j[static_cast<size_t>(i)]);
      }
      break;
    case Step::kSlice:
      if (j.is_array()) {
        const int64_t n = static_cast<int64_t>(j.size());
        auto norm = [n](int64_t v) { return std::clamp<int64_t>(v < 0 ? n + v : v, 0, n); };
        const int64_t from = step.from ? norm(*step.from) : 0;
        const int64_t to = step.to ? norm(*step.to) : n;
        for (int64_t i = from; i < to; i += step.stride) out.push_back(&j[static_cast<size_t>(i)]);
      }
      break;
    case Step::kFilter:
      if (j.is_array()) {
        for (const Json& c : j) {
          if (matches(step.filter, root, c)) out.push_back(&c);
        }
      }
      break;
    case Step::kDescend: {
      std::vector<const Json*> all;
      descendants(j, all);
      for (const Json* d : all) {
        if (step.name.empty()) {
          if (d != &j) out.push_back(d);
        } else if (d->is_object()) {
          if (auto it = d->find(step.name); it != d->end()) out.push_back(&*it);
        }
      }
      break;
    }
  }
}

std::vector<const Json*> apply(const Path& path, const Json& root, const Json& current) {
  std::vector<const Json*> nodes{&current};
  for (size_t s = 0; s < path.steps.size(); ++s) {
    const Step& step = path.steps[s];
    std::vector<const Json*> next;
    // "..[…]": every descendant, then the bracket on each.
    if (step.kind == Step::kDescend && step.name.empty() && s + 1 < path.steps.size() &&
        path.steps[s + 1].kind != Step::kField && path.steps[s + 1].kind != Step::kDescend) {
      std::vector<const Json*> all;
      for (const Json* n : nodes) descendants(*n, all);
      nodes = std::move(all);
      continue;
    }
    for (const Json* n : nodes) apply_step(step, root, *n, next);
    nodes = std::move(next);
  }
  return nodes;
}

std::string text_of(const Json& j) { return j.is_string() ? j.get<std::string>() : j.dump(); }

Status render_nodes(const std::vector<Node>& nodes, const Json& root, const Json& current,
                    std::string& out) {
  for (const Node& n : nodes) {
    if (n.kind == Node::kText) {
      out += n.text;
    } else if (n.kind == Node::kValues) {
      bool first = true;
      for (const Path& p : n.union_paths) {
        for (const Json* v : apply(p, root, current)) {
          if (!first) out += ' ';
          first = false;
          out += text_of(*v);
        }
      }
    } else {
      for (const Json* v : apply(n.union_paths.front(), root, current)) {
        GF_RETURN_IF_ERROR(render_nodes(n.body, root, *v, out));
      }
    }
    if (out.size() > kMaxOutputBytes) {
      return validation_error(fmt::format(
          "jsonpath: the output passed {} bytes; narrow the template", kMaxOutputBytes));
    }
  }
  return ok_status();
}

std::string_view strip_braces(std::string_view path) {
  while (!path.empty() && path.front() == ' ') path.remove_prefix(1);
  while (!path.empty() && path.back() == ' ') path.remove_suffix(1);
  if (path.size() >= 2 && path.front() == '{' && path.back() == '}') {
    path = path.substr(1, path.size() - 2);
  }
  return path;
}

}  // namespace

Result<std::shared_ptr<const Template>> parse(std::string_view text) {
  GF_ASSIGN_OR_RETURN(Template t, parse_template(text));
  return std::make_shared<const Template>(std::move(t));
}

Result<std::string> render(const Template& t, const Json& data) {
  std::string out;
  GF_RETURN_IF_ERROR(render_nodes(t.nodes, data, data, out));
  return out;
}

Result<std::string> render(std::string_view text, const Json& data) {
  GF_ASSIGN_OR_RETURN(std::shared_ptr<const Template> t, parse(text));
  return render(*t, data);
}

Result<std::vector<Json>> select(std::string_view path, const Json& data) {
  const std::string_view inner = strip_braces(path);
  if (inner.size() > kMaxTemplateBytes) return validation_error("jsonpath: the path is too long");
  Parser p(inner);
  GF_ASSIGN_OR_RETURN(Path parsed, p.path(0));
  p.skip_blanks();
  if (!p.done()) return p.error("unexpected text in the path");
  std::vector<Json> out;
  for (const Json* v : apply(parsed, data, data)) out.push_back(*v);
  return out;
}

Result<std::vector<Column>> parse_columns(std::string_view spec) {
  if (spec.size() > kMaxTemplateBytes) {
    return validation_error("custom-columns: the specification is too long");
  }
  std::vector<Column> columns;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i <= spec.size(); ++i) {
    if (i < spec.size() && (spec[i] == '[' || spec[i] == '(' || spec[i] == '{')) ++depth;
    if (i < spec.size() && (spec[i] == ']' || spec[i] == ')' || spec[i] == '}') && depth > 0)
      --depth;
    if (i < spec.size() && !(spec[i] == ',' && depth == 0)) continue;
    const std::string_view item = spec.substr(start, i - start);
    start = i + 1;
    const size_t colon = item.find(':');
    if (colon == std::string_view::npos || colon == 0 || colon + 1 == item.size()) {
      return validation_error(
          fmt::format("custom-columns: expected HEADER:PATH (such as NAME:.metadata.name), got "
                      "\"{}\"",
                      printable(item, 80)));
    }
    Column c{std::string(item.substr(0, colon)), std::string(item.substr(colon + 1))};
    GF_RETURN_IF_ERROR(select(c.path, Json::object()).status().with_prefix(c.header));
    columns.push_back(std::move(c));
  }
  return columns;
}

Result<std::vector<std::string>> column_cells(const std::vector<Column>& columns,
                                              const Json& item) {
  std::vector<std::string> cells;
  for (const Column& c : columns) {
    GF_ASSIGN_OR_RETURN(std::vector<Json> values, select(c.path, item));
    std::string cell;
    for (const Json& v : values) cell += (cell.empty() ? "" : ",") + text_of(v);
    cells.push_back(values.empty() ? "<none>" : cell);
  }
  return cells;
}

}  // namespace gf::jsonpath
