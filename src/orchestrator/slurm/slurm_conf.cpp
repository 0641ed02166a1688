#include "orchestrator/slurm/slurm_conf.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <utility>

#include "orchestrator/slurm/slurm_control.h"

namespace gf {

namespace {

constexpr std::string_view kBlockTrailer = " -- edits inside this block are overwritten";
constexpr size_t kMaxExpandedNames = 65536;
constexpr size_t kMaxSuffixDigits = 18;  // keeps the numeric suffix within int64

bool is_blank(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v';
}
bool is_digit(char c) { return c >= '0' && c <= '9'; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_blank(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_blank(s.back())) s.remove_suffix(1);
  return s;
}

char ascii_lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (ascii_lower(a[i]) != ascii_lower(b[i])) return false;
  }
  return true;
}

// ---- hostlists ------------------------------------------------------------------------------

// A name split into its prefix and trailing decimal digits (empty when there are none or too
// many to hold in an int64).
struct SplitName {
  std::string_view prefix;
  std::string_view digits;
  int64_t number = 0;
};

SplitName split_name(std::string_view name) {
  size_t i = name.size();
  while (i > 0 && is_digit(name[i - 1])) --i;
  SplitName out{name, {}, 0};
  const std::string_view digits = name.substr(i);
  if (digits.empty() || digits.size() > kMaxSuffixDigits) return out;
  out.prefix = name.substr(0, i);
  out.digits = digits;
  for (char c : digits) out.number = out.number * 10 + (c - '0');
  return out;
}

// Natural order: by prefix, then names without a number first, then by number, then by text
// (so n01 and n1 still order deterministically).
bool natural_less(std::string_view a, std::string_view b) {
  const SplitName x = split_name(a);
  const SplitName y = split_name(b);
  return std::tuple(x.prefix, !x.digits.empty(), x.number, a) <
         std::tuple(y.prefix, !y.digits.empty(), y.number, b);
}

bool has_hostlist_syntax(std::string_view name) {
  return name.find_first_of("[],") != std::string_view::npos;
}

std::string pad_number(int64_t n, size_t width) {
  std::string s = std::to_string(n);
  if (s.size() < width) s.insert(0, width - s.size(), '0');
  return s;
}

std::string render_ranges(const std::vector<int64_t>& numbers, size_t width) {
  std::string out;
  for (size_t i = 0; i < numbers.size();) {
    size_t j = i;
    while (j + 1 < numbers.size() && numbers[j + 1] == numbers[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += pad_number(numbers[i], width);
    if (j > i) out += '-' + pad_number(numbers[j], width);
    i = j + 1;
  }
  return out;
}

// Splits at commas that are not inside brackets.
std::vector<std::string_view> split_top_level(std::string_view expr) {
  std::vector<std::string_view> out;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i <= expr.size(); ++i) {
    if (i == expr.size() || (expr[i] == ',' && depth == 0)) {
      if (i > start) out.push_back(expr.substr(start, i - start));
      start = i + 1;
    } else if (expr[i] == '[') {
      ++depth;
    } else if (expr[i] == ']' && depth > 0) {
      --depth;
    }
  }
  return out;
}

// Expands one item such as "r[1-2]n[01-02]" into `out`; false when the item is malformed.
bool expand_item(std::string_view item, std::vector<std::string>& out) {
  const size_t open = item.find('[');
  if (open == std::string_view::npos) {
    if (item.find(']') != std::string_view::npos) return false;
    out.emplace_back(item);
    return true;
  }
  const size_t close = item.find(']', open);
  if (close == std::string_view::npos) return false;
  const std::string_view prefix = item.substr(0, open);
  std::vector<std::string> tails;
  if (!expand_item(item.substr(close + 1), tails)) return false;
  for (std::string_view range : split_top_level(item.substr(open + 1, close - open - 1))) {
    const size_t dash = range.find('-');
    const std::string_view lo = range.substr(0, dash);
    const std::string_view hi = dash == std::string_view::npos ? lo : range.substr(dash + 1);
    if (lo.empty() || hi.empty() || lo.size() > kMaxSuffixDigits || hi.size() > kMaxSuffixDigits ||
        !std::all_of(lo.begin(), lo.end(), is_digit) ||
        !std::all_of(hi.begin(), hi.end(), is_digit)) {
      return false;
    }
    const int64_t a = std::stoll(std::string(lo));
    const int64_t b = std::stoll(std::string(hi));
    if (b < a) return false;
    for (int64_t n = a; n <= b && out.size() < kMaxExpandedNames; ++n) {
      const std::string head = std::string(prefix) + pad_number(n, lo.size());
      for (const std::string& tail : tails) out.push_back(head + tail);
    }
  }
  return true;
}

// ---- slurm.conf lines -----------------------------------------------------------------------

struct Line {
  size_t begin = 0;
  size_t content_end = 0;  // before "\n" or "\r\n"
  size_t end = 0;          // after the terminator (== content_end on a last line without one)
};

std::vector<Line> split_lines(std::string_view text) {
  std::vector<Line> lines;
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t nl = text.find('\n', pos);
    Line line;
    line.begin = pos;
    if (nl == std::string_view::npos) {
      line.content_end = line.end = text.size();
    } else {
      line.content_end = (nl > pos && text[nl - 1] == '\r') ? nl - 1 : nl;
      line.end = nl + 1;
    }
    lines.push_back(line);
    pos = line.end;
  }
  return lines;
}

enum class BlockKind { kNodes = 0, kPartitions = 1 };
constexpr int kBlockKinds = 2;

std::string_view block_noun(BlockKind kind) {
  return kind == BlockKind::kNodes ? "nodes" : "partitions";
}

struct Marker {
  BlockKind kind;
  bool begin;
};

bool starts_with_marker(std::string_view content, std::string_view marker) {
  return content.substr(0, marker.size()) == marker &&
         (content.size() == marker.size() || is_blank(content[marker.size()]));
}

std::optional<Marker> classify(std::string_view content) {
  content = trim(content);
  if (starts_with_marker(content, kSlurmNodesBegin)) return Marker{BlockKind::kNodes, true};
  if (starts_with_marker(content, kSlurmNodesEnd)) return Marker{BlockKind::kNodes, false};
  if (starts_with_marker(content, kSlurmPartitionsBegin)) {
    return Marker{BlockKind::kPartitions, true};
  }
  if (starts_with_marker(content, kSlurmPartitionsEnd)) {
    return Marker{BlockKind::kPartitions, false};
  }
  return std::nullopt;
}

struct Block {
  size_t begin_line = 0;  // index into the line vector
  size_t end_line = 0;
};

struct BlockScan {
  std::optional<Block> blocks[kBlockKinds];
  std::string error;  // non-empty: the markers are malformed
};

std::string marker_text(BlockKind kind, bool begin) {
  return std::string(begin ? "# BEGIN" : "# END") + " gpufleet managed " +
         std::string(block_noun(kind));
}

std::string malformed(size_t line_index, const std::string& what) {
  return fmt::format(
      "slurm.conf line {}: {}; the file was left unchanged, fix the gpufleet markers by hand",
      line_index + 1, what);
}

BlockScan scan_blocks(std::string_view text, const std::vector<Line>& lines) {
  BlockScan scan;
  // The block being read, if any. Plain fields rather than an optional: GCC's
  // -Wmaybe-uninitialized misfires on optional<pair> here.
  bool open = false;
  BlockKind open_kind = BlockKind::kNodes;
  size_t open_line = 0;
  auto opened_at = [&] {
    return fmt::format("the managed {} block opened at line {}", block_noun(open_kind),
                       open_line + 1);
  };
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::optional<Marker> m =
        classify(text.substr(lines[i].begin, lines[i].content_end - lines[i].begin));
    if (!m) continue;
    const int k = static_cast<int>(m->kind);
    const std::string quoted = "`" + marker_text(m->kind, m->begin) + "`";
    if (m->begin) {
      if (open) {
        scan.error = malformed(i, quoted + " inside " + opened_at());
        return scan;
      }
      if (scan.blocks[k]) {
        scan.error =
            malformed(i, fmt::format("a second {} (the first block spans lines {}-{})", quoted,
                                     scan.blocks[k]->begin_line + 1, scan.blocks[k]->end_line + 1));
        return scan;
      }
      open = true;
      open_kind = m->kind;
      open_line = i;
    } else {
      if (!open) {
        scan.error = malformed(i, quoted + " without a matching BEGIN");
        return scan;
      }
      if (open_kind != m->kind) {
        scan.error = malformed(i, quoted + " while " + opened_at() + " is still open");
        return scan;
      }
      scan.blocks[k] = Block{open_line, i};
      open = false;
    }
  }
  if (open) {
    scan.error = malformed(open_line, "`" + marker_text(open_kind, true) + "` has no matching `" +
                                          marker_text(open_kind, false) + "`");
  }
  return scan;
}

// NodeName and PartitionName definitions written by hand outside the managed blocks, with the
// 1-based line of their first definition.
struct HandWritten {
  std::map<std::string, size_t, std::less<>> nodes;
  std::map<std::string, size_t, std::less<>> partitions;
  bool default_partition = false;  // a hand-written partition says Default=YES
};

// The value of a leading `Key=value` pair when the line's first key is `key` (Slurm keys are
// case-insensitive; '#' starts a comment).
std::optional<std::string_view> leading_value(std::string_view content, std::string_view key) {
  content = trim(content.substr(0, content.find('#')));
  if (content.size() <= key.size() || !iequals(content.substr(0, key.size()), key)) {
    return std::nullopt;
  }
  std::string_view rest = content.substr(key.size());
  while (!rest.empty() && is_blank(rest.front())) rest.remove_prefix(1);
  if (rest.empty() || rest.front() != '=') return std::nullopt;
  rest.remove_prefix(1);
  while (!rest.empty() && is_blank(rest.front())) rest.remove_prefix(1);
  if (!rest.empty() && rest.front() == '"') {
    rest.remove_prefix(1);
    return rest.substr(0, rest.find('"'));
  }
  size_t n = 0;
  while (n < rest.size() && !is_blank(rest[n])) ++n;
  return rest.substr(0, n);
}

// Whether a PartitionName line carries `Default=YES` (keys and values case-insensitive).
bool says_default_yes(std::string_view content) {
  content = content.substr(0, content.find('#'));
  size_t at = 0;
  while (at < content.size()) {
    while (at < content.size() && is_blank(content[at])) ++at;
    size_t end = at;
    while (end < content.size() && !is_blank(content[end])) ++end;
    const std::string_view word = content.substr(at, end - at);
    if (iequals(word, "Default=YES")) return true;
    at = end;
  }
  return false;
}

HandWritten find_hand_written(std::string_view text, const std::vector<Line>& lines,
                              const BlockScan& scan) {
  HandWritten out;
  for (size_t i = 0; i < lines.size(); ++i) {
    bool managed = false;
    for (const auto& block : scan.blocks) {
      if (block && i >= block->begin_line && i <= block->end_line) managed = true;
    }
    if (managed) continue;
    const std::string_view content =
        text.substr(lines[i].begin, lines[i].content_end - lines[i].begin);
    if (auto v = leading_value(content, "NodeName"); v && !iequals(*v, "DEFAULT")) {
      for (std::string& name : expand_hostlist(*v)) out.nodes.emplace(std::move(name), i + 1);
    } else if (auto p = leading_value(content, "PartitionName"); p && !iequals(*p, "DEFAULT")) {
      out.partitions.emplace(std::string(*p), i + 1);
      if (says_default_yes(content)) out.default_partition = true;
    }
  }
  return out;
}

// ---- rendering ------------------------------------------------------------------------------

// Names that survive Slurm's `Key=value` tokenizer unquoted and mean one node or partition.
bool valid_slurm_name(std::string_view name) {
  if (name.empty() || iequals(name, "DEFAULT") || iequals(name, "ALL")) return false;
  return std::none_of(name.begin(), name.end(), [](char c) {
    return is_blank(c) || static_cast<unsigned char>(c) < 0x20 ||
           std::string_view("#=,[]\"\\").find(c) != std::string_view::npos;
  });
}

struct Rendered {
  std::vector<std::string> node_lines;
  std::vector<std::string> partition_lines;
  std::vector<std::string> warnings;
};

std::string render_node(const SlurmNodeLine& n, std::vector<std::string>& warnings) {
  std::string line = "NodeName=" + n.name;
  if (!n.hostname.empty() && valid_slurm_name(n.hostname)) line += " NodeHostname=" + n.hostname;
  if (!n.address.empty() && valid_slurm_name(n.address)) line += " NodeAddr=" + n.address;
  if (n.port > 0) line += fmt::format(" Port={}", n.port);
  if (n.cpus > 0) line += fmt::format(" CPUs={}", n.cpus);
  if (n.real_memory_mb > 0) line += fmt::format(" RealMemory={}", n.real_memory_mb);
  if (n.gpus > 0) line += fmt::format(" Gres=gpu:{}", n.gpus);
  if (!n.features.empty()) {
    const bool ok = std::none_of(n.features.begin(), n.features.end(), [](char c) {
      return is_blank(c) || static_cast<unsigned char>(c) < 0x20 || c == '#' || c == '"';
    });
    if (ok) {
      line += " Feature=" + n.features;
    } else {
      warnings.push_back("node " + n.name + ": features \"" + n.features +
                         "\" contain blanks, '#' or quotes; Feature left out");
    }
  }
  if (!n.state.empty() && valid_slurm_name(n.state)) line += " State=" + n.state;
  return line;
}

Rendered render_layout(const SlurmLayout& layout, const HandWritten& hand) {
  Rendered out;
  std::map<std::string, const SlurmNodeLine*, std::less<>> nodes;
  for (const SlurmNodeLine& n : layout.nodes) {
    if (!valid_slurm_name(n.name)) {
      out.warnings.push_back("node name \"" + n.name +
                             "\" cannot be written to slurm.conf; skipped");
    } else if (auto it = hand.nodes.find(n.name); it != hand.nodes.end()) {
      out.warnings.push_back(
          fmt::format("NodeName={} is defined by hand at slurm.conf line {}; the hand-written "
                      "line wins and gpufleet does not render its own",
                      n.name, it->second));
    } else if (!nodes.emplace(n.name, &n).second) {
      out.warnings.push_back("node " + n.name + " appears twice in the layout; the first is kept");
    }
  }
  std::vector<const SlurmNodeLine*> sorted;
  for (const auto& [name, n] : nodes) sorted.push_back(n);
  std::sort(sorted.begin(), sorted.end(), [](const SlurmNodeLine* a, const SlurmNodeLine* b) {
    return natural_less(a->name, b->name);
  });
  for (const SlurmNodeLine* n : sorted) out.node_lines.push_back(render_node(*n, out.warnings));

  std::map<std::string, std::set<std::string>, std::less<>> partitions;
  std::string default_partition;
  for (const SlurmPartitionLine& p : layout.partitions) {
    if (p.is_default && default_partition.empty() && !hand.default_partition &&
        valid_slurm_name(p.name) && !hand.partitions.contains(p.name))
      default_partition = p.name;
    if (!valid_slurm_name(p.name)) {
      out.warnings.push_back("partition name \"" + p.name +
                             "\" cannot be written to slurm.conf; skipped");
    } else if (auto it = hand.partitions.find(p.name); it != hand.partitions.end()) {
      out.warnings.push_back(
          fmt::format("PartitionName={} is defined by hand at slurm.conf line {}; the "
                      "hand-written line wins and gpufleet does not render its own",
                      p.name, it->second));
    } else {
      partitions[p.name].insert(p.nodes.begin(), p.nodes.end());
    }
  }
  for (const auto& [name, members] : partitions) {
    std::vector<std::string> defined;
    for (const std::string& node : members) {
      if (nodes.count(node) > 0 || hand.nodes.count(node) > 0) {
        defined.push_back(node);
      } else {
        out.warnings.push_back("partition " + name + " lists node \"" + node +
                               "\", which no NodeName line defines; left out of the partition");
      }
    }
    std::string line = "PartitionName=" + name;
    if (!defined.empty()) line += " Nodes=" + compress_hostlist(std::move(defined));
    if (name == default_partition) line += " Default=YES";
    out.partition_lines.push_back(std::move(line));
  }
  return out;
}

// The whole block, each line ended by `eol` except the END marker, which gets `last_eol`.
std::string render_block(BlockKind kind, const std::vector<std::string>& body, std::string_view eol,
                         std::string_view last_eol) {
  std::string out = marker_text(kind, true) + std::string(kBlockTrailer) + std::string(eol);
  for (const std::string& line : body) out += line + std::string(eol);
  return out + marker_text(kind, false) + std::string(last_eol);
}

std::string_view detect_eol(std::string_view text) {
  const size_t nl = text.find('\n');
  // A file of one line that ends in CR gets its line ending completed to CRLF when the blocks
  // are appended; deciding "\n" here would make the next merge see CRLF and rewrite them.
  if (nl == std::string_view::npos) return text.ends_with('\r') ? "\r\n" : "\n";
  return (nl > 0 && text[nl - 1] == '\r') ? "\r\n" : "\n";
}

}  // namespace

std::vector<std::string> expand_hostlist(std::string_view expression) {
  std::vector<std::string> out;
  for (std::string_view item : split_top_level(trim(expression))) {
    std::vector<std::string> names;
    if (expand_item(item, names)) {
      out.insert(out.end(), names.begin(), names.end());
    } else {
      out.emplace_back(item);
    }
    if (out.size() >= kMaxExpandedNames) {
      out.resize(kMaxExpandedNames);
      break;
    }
  }
  return out;
}

std::string compress_hostlist(std::vector<std::string> names) {
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  // Zero-padded suffixes form groups of one width ("n01" -> width 2); an unpadded number joins
  // the padded group of its own length when there is one ("n10" with "n01"), else width 0.
  std::set<std::pair<std::string_view, size_t>> padded;
  for (const std::string& name : names) {
    const SplitName s = split_name(name);
    if (!has_hostlist_syntax(name) && s.digits.size() > 1 && s.digits[0] == '0') {
      padded.emplace(s.prefix, s.digits.size());
    }
  }
  std::map<std::pair<std::string_view, size_t>, std::vector<int64_t>> groups;
  std::vector<std::string> items;
  for (const std::string& name : names) {
    const SplitName s = split_name(name);
    if (s.digits.empty() || has_hostlist_syntax(name)) {
      items.push_back(name);
      continue;
    }
    size_t width = s.digits.size();
    if (s.digits.size() == 1 || s.digits[0] != '0') {
      if (padded.count({s.prefix, width}) == 0) width = 0;
    }
    groups[{s.prefix, width}].push_back(s.number);
  }
  for (auto& [key, numbers] : groups) {
    std::sort(numbers.begin(), numbers.end());
    const auto& [prefix, width] = key;
    if (numbers.size() == 1) {
      items.push_back(std::string(prefix) + pad_number(numbers[0], width));
    } else {
      items.push_back(std::string(prefix) + "[" + render_ranges(numbers, width) + "]");
    }
  }
  std::sort(items.begin(), items.end(), natural_less);
  std::string out;
  for (const std::string& item : items) {
    if (!out.empty()) out += ',';
    out += item;
  }
  return out;
}

SlurmMergeResult merge_slurm_conf(std::string_view existing, const SlurmLayout& layout) {
  const std::vector<Line> lines = split_lines(existing);
  const BlockScan scan = scan_blocks(existing, lines);
  if (!scan.error.empty()) return SlurmMergeResult{std::string(existing), {scan.error}};

  const HandWritten hand = find_hand_written(existing, lines, scan);
  Rendered rendered = render_layout(layout, hand);
  const std::string_view eol = detect_eol(existing);
  auto body = [&](BlockKind kind) -> const std::vector<std::string>& {
    return kind == BlockKind::kNodes ? rendered.node_lines : rendered.partition_lines;
  };

  // Present blocks are rewritten in place, in file order; bytes between them are copied.
  std::vector<std::pair<BlockKind, Block>> present;
  for (int k = 0; k < kBlockKinds; ++k) {
    if (scan.blocks[k]) present.emplace_back(static_cast<BlockKind>(k), *scan.blocks[k]);
  }
  std::sort(present.begin(), present.end(),
            [](const auto& a, const auto& b) { return a.second.begin_line < b.second.begin_line; });
  std::string text;
  text.reserve(existing.size() + 128 * (layout.nodes.size() + layout.partitions.size() + 4));
  size_t cursor = 0;
  for (const auto& [kind, block] : present) {
    const Line& first = lines[block.begin_line];
    const Line& last = lines[block.end_line];
    text.append(existing.substr(cursor, first.begin - cursor));
    text += render_block(kind, body(kind), eol,
                         existing.substr(last.content_end, last.end - last.content_end));
    cursor = last.end;
  }
  text.append(existing.substr(cursor));

  for (BlockKind kind : {BlockKind::kNodes, BlockKind::kPartitions}) {
    if (scan.blocks[static_cast<int>(kind)]) continue;
    if (!text.empty() && text.back() != '\n') {
      // After a trailing CR only the LF is missing from a CRLF ending.
      text += text.back() == '\r' && eol == "\r\n" ? "\n" : eol;
    }
    text += render_block(kind, body(kind), eol, eol);
  }
  return SlurmMergeResult{std::move(text), std::move(rendered.warnings)};
}

}  // namespace gf

namespace gf {

namespace {

constexpr size_t kMaxLayoutNodes = 65536;
constexpr size_t kMaxLayoutPartitions = 256;

// A name the layout may carry: what slurm.conf can hold and scontrol can be given.
bool layout_name_ok(const std::string& name) {
  return slurm::check_slurm_name("name", name).ok() && valid_slurm_name(name);
}

}  // namespace

Json slurm_layout_to_json(const SlurmLayout& layout) {
  Json nodes = Json::array();
  for (const SlurmNodeLine& n : layout.nodes) {
    nodes.push_back(Json{{"Name", n.name},
                         {"CPUs", n.cpus},
                         {"RealMemory", n.real_memory_mb},
                         {"Gpus", n.gpus},
                         {"Feature", n.features},
                         {"Port", n.port},
                         {"State", n.state}});
  }
  Json parts = Json::array();
  for (const SlurmPartitionLine& p : layout.partitions)
    parts.push_back(Json{{"Name", p.name}, {"Nodes", p.nodes}, {"Default", p.is_default}});
  return Json{{"Nodes", std::move(nodes)}, {"Partitions", std::move(parts)}};
}

Result<SlurmLayout> slurm_layout_from_json(const Json& j) {
  if (!j.is_object()) return validation_error("layout: expected an object");
  SlurmLayout out;
  auto nodes = j.find("Nodes");
  auto parts = j.find("Partitions");
  if (nodes == j.end() || !nodes->is_array()) return validation_error("Nodes: expected a list");
  if (parts == j.end() || !parts->is_array())
    return validation_error("Partitions: expected a list");
  if (nodes->size() > kMaxLayoutNodes)
    return validation_error(fmt::format("Nodes: at most {} nodes", kMaxLayoutNodes));
  if (parts->size() > kMaxLayoutPartitions)
    return validation_error(fmt::format("Partitions: at most {} partitions", kMaxLayoutPartitions));
  for (size_t i = 0; i < nodes->size(); ++i) {
    ObjectReader r((*nodes)[i], fmt::format("Nodes[{}]", i));
    SlurmNodeLine n;
    n.name = r.required_string("Name");
    n.cpus = static_cast<int>(r.optional_int("CPUs").value_or(0));
    n.real_memory_mb = r.optional_int("RealMemory").value_or(0);
    n.gpus = static_cast<int>(r.optional_int("Gpus").value_or(0));
    n.features = r.optional_string("Feature").value_or("");
    n.port = static_cast<int>(r.optional_int("Port").value_or(0));
    n.state = r.optional_string("State").value_or("");
    GF_RETURN_IF_ERROR(r.status());
    if (!layout_name_ok(n.name))
      return validation_error(fmt::format("Nodes[{}].Name: not a Slurm node name", i));
    if (n.port < 0 || n.port > 65535)
      return validation_error(fmt::format("Nodes[{}].Port: expected 0 to 65535", i));
    if (!n.features.empty() && !layout_name_ok(n.features))
      return validation_error(fmt::format("Nodes[{}].Feature: not a Slurm feature", i));
    if (n.state != "" && n.state != "FUTURE" && n.state != "UNKNOWN" && n.state != "CLOUD")
      return validation_error(fmt::format("Nodes[{}].State: expected FUTURE, UNKNOWN or CLOUD", i));
    out.nodes.push_back(std::move(n));
  }
  for (size_t i = 0; i < parts->size(); ++i) {
    ObjectReader r((*parts)[i], fmt::format("Partitions[{}]", i));
    SlurmPartitionLine p;
    p.name = r.required_string("Name");
    p.nodes = r.optional_string_list("Nodes").value_or(std::vector<std::string>{});
    p.is_default = r.optional_bool("Default").value_or(false);
    GF_RETURN_IF_ERROR(r.status());
    if (!layout_name_ok(p.name))
      return validation_error(fmt::format("Partitions[{}].Name: not a Slurm partition name", i));
    for (const std::string& n : p.nodes) {
      if (!layout_name_ok(n))
        return validation_error(fmt::format("Partitions[{}].Nodes: not a Slurm node name", i));
    }
    out.partitions.push_back(std::move(p));
  }
  return out;
}

std::string slurm_longest_step_socket(std::string_view runtime_dir, std::string_view node) {
  return fmt::format("{}/{}/{}_4294967294.4294967291", runtime_dir, node, node);
}

}  // namespace gf
