// slurm.conf in merge mode (orchestrator/slurm/slurm_conf.h): POST
// /v1/clusters/{name}/slurm-conf/merge takes the user's file, and every byte outside gpufleet's two
// marked blocks is theirs. The input is that file, optionally followed by a line "@@layout" and
// layout lines
//   node <name> [cpus] [memory-mb] [gpus] [features]
//   partition <name> [node]...
// (without it, a fixed layout of three workers in one partition is merged).
//
// Invariants checked, the ones the header promises:
//  - the result is a pure function of its inputs, and merging it again with the same layout
//    returns it unchanged;
//  - bytes outside the managed blocks are never changed (the blocks may be appended at the end,
//    after one line ending when the file lacks a final one); with malformed markers the text is
//    the input unchanged;
//  - every managed NodeName / PartitionName line names a distinct node / partition;
//  - expand_hostlist inverts compress_hostlist on plain names, and stops at 65,536 names.
#include <algorithm>
#include <charconv>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "fuzz_support.h"
#include "orchestrator/slurm/slurm_conf.h"

namespace gf {
namespace {

std::vector<std::string_view> words(std::string_view line) {
  std::vector<std::string_view> out;
  while (!line.empty()) {
    auto [w, rest] = fuzz::split_once(line, " ");
    if (!w.empty()) out.push_back(w);
    line = rest;
  }
  return out;
}

int64_t number(std::string_view s) {
  int64_t v = 0;
  std::from_chars(s.data(), s.data() + s.size(), v);
  return v;
}

SlurmLayout parse_layout(std::string_view text) {
  SlurmLayout layout;
  for (std::string_view rest = text; !rest.empty();) {
    auto [line, tail] = fuzz::split_once(rest, "\n");
    rest = tail;
    const std::vector<std::string_view> w = words(line);
    if (w.size() >= 2 && w[0] == "node") {
      SlurmNodeLine n;
      n.name = std::string(w[1]);
      if (w.size() > 2) n.cpus = static_cast<int>(number(w[2]) % 100000);
      if (w.size() > 3) n.real_memory_mb = number(w[3]);
      if (w.size() > 4) n.gpus = static_cast<int>(number(w[4]) % 1000);
      if (w.size() > 5) n.features = std::string(w[5]);
      layout.nodes.push_back(std::move(n));
    } else if (w.size() >= 2 && w[0] == "partition") {
      SlurmPartitionLine p;
      p.name = std::string(w[1]);
      for (size_t i = 2; i < w.size(); ++i) p.nodes.emplace_back(w[i]);
      layout.partitions.push_back(std::move(p));
    }
  }
  return layout;
}

SlurmLayout default_layout() {
  SlurmLayout layout;
  for (const char* name : {"worker-1", "worker-2", "worker-10"}) {
    layout.nodes.push_back({name, 192, 2000000, 8, "p5"});
  }
  layout.partitions.push_back({"gpu", {"worker-1", "worker-2", "worker-10"}});
  return layout;
}

// The merge's rule: after optional blanks, the marker text, then the end of the line or a blank
// ("# BEGIN gpufleet managed nodesX" is the user's text).
bool is_marker(std::string_view line, std::string_view marker) {
  while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
  if (!line.starts_with(marker)) return false;
  const std::string_view rest = line.substr(marker.size());
  return rest.empty() || rest.front() == ' ' || rest.front() == '\t' || rest.front() == '\r' ||
         rest.front() == '\n';
}

// The text with both managed blocks (BEGIN to END marker lines, inclusive) cut out, and the
// lines inside them.
struct Parts {
  std::string outside;
  std::vector<std::string> managed;
};
Parts split_blocks(std::string_view text) {
  Parts parts;
  bool inside = false;
  for (std::string_view rest = text; !rest.empty();) {
    const size_t nl = rest.find('\n');
    const std::string_view line = nl == std::string_view::npos ? rest : rest.substr(0, nl + 1);
    rest.remove_prefix(line.size());
    if (!inside && (is_marker(line, kSlurmNodesBegin) || is_marker(line, kSlurmPartitionsBegin))) {
      inside = true;
    } else if (inside &&
               (is_marker(line, kSlurmNodesEnd) || is_marker(line, kSlurmPartitionsEnd))) {
      inside = false;
    } else if (inside) {
      parts.managed.emplace_back(line);
    } else {
      parts.outside += line;
    }
  }
  return parts;
}

void check_merge(std::string_view existing, const SlurmLayout& layout) {
  const SlurmMergeResult out = merge_slurm_conf(existing, layout);
  const SlurmMergeResult same = merge_slurm_conf(existing, layout);
  FUZZ_CHECK(same.text == out.text && same.warnings == out.warnings, "not deterministic");
  const SlurmMergeResult again = merge_slurm_conf(out.text, layout);
  FUZZ_CHECK(again.text == out.text, "merging the result again changed it\n--- once ---\n" +
                                         out.text + "\n--- twice ---\n" + again.text);
  if (out.text == existing) return;  // malformed markers (or nothing to change)

  const Parts before = split_blocks(existing);
  const Parts after = split_blocks(out.text);
  FUZZ_CHECK(after.outside.starts_with(before.outside), "user bytes changed\n--- before ---\n" +
                                                            before.outside + "\n--- after ---\n" +
                                                            after.outside);
  const std::string_view added = std::string_view(after.outside).substr(before.outside.size());
  FUZZ_CHECK(added.empty() || ((added == "\n" || added == "\r\n") && !existing.ends_with('\n')),
             "bytes added outside the blocks: \"" + std::string(added) + "\"");

  std::set<std::string> node_names, partition_names;
  for (const std::string& line : after.managed) {
    const std::vector<std::string_view> w =
        words(std::string_view(line).substr(0, line.find_first_of("\r\n")));
    if (w.empty()) continue;
    if (w[0].starts_with("NodeName=")) {
      FUZZ_CHECK(node_names.insert(std::string(w[0])).second, "twice: " + line);
    } else if (w[0].starts_with("PartitionName=")) {
      FUZZ_CHECK(partition_names.insert(std::string(w[0])).second, "twice: " + line);
    } else {
      fuzz::fail(__FILE__, __LINE__, "managed line is NodeName= or PartitionName=", line);
    }
  }
}

void check_hostlist(std::string_view text, const SlurmLayout& layout) {
  FUZZ_CHECK(expand_hostlist(text).size() <= 65536, "expansion unbounded");
  // Plain names (no hostlist syntax, no separators, no blanks or control characters: a name
  // slurm.conf can hold unquoted) must come back as the same set. A name starting with a form
  // feed is not one: the expression's ends are trimmed of blanks.
  std::set<std::string> plain;
  for (const SlurmNodeLine& n : layout.nodes) {
    const bool word = std::none_of(n.name.begin(), n.name.end(), [](char c) {
      return static_cast<unsigned char>(c) <= 0x20 || c == '[' || c == ']' || c == ',';
    });
    if (!n.name.empty() && word) plain.insert(n.name);
  }
  const std::string compressed = compress_hostlist({plain.begin(), plain.end()});
  const std::vector<std::string> expanded = expand_hostlist(compressed);
  const std::set<std::string> back(expanded.begin(), expanded.end());
  FUZZ_CHECK(back == plain && expanded.size() == plain.size(), compressed);
}

}  // namespace
}  // namespace gf

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > gf::fuzz::kMaxInputBytes) return -1;
  const std::string_view text = gf::fuzz::as_text(data, size);
  const size_t at = text.find("\n@@layout\n");
  const std::string_view existing = text.substr(0, at);
  const gf::SlurmLayout layout =
      at == std::string_view::npos ? gf::default_layout() : gf::parse_layout(text.substr(at + 10));
  gf::check_merge(existing, layout);
  gf::check_hostlist(existing, layout);
  return 0;
}
