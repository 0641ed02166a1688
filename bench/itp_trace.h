// GPUs per job as the Microsoft ITP trace has them (shared/traces/microsoft-itp-elasticflow, MIT):
// the empirical distribution of num_gpu over every cluster*.csv, or a fixed fallback table (named
// in the label) when the trace cannot be read. Shared by the benchmarks that draw job sizes.
//
// Environment: GF_TRACE_DIR = a folder with the cluster*.csv files (else shared/traces/...,
// ../shared/traces/... and /work/shared/traces/... are tried).
#pragma once

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/random.h"

namespace gf::bench {

struct SizeDist {
  std::vector<std::pair<int64_t, uint64_t>> cumulative;  // (gpus, running count)
  uint64_t total = 0;
  bool from_trace = false;
  std::string label;

  int64_t sample(Random& rng) const {
    const uint64_t u = rng.uniform(total);
    for (const auto& [gpus, upto] : cumulative) {
      if (u < upto) return gpus;
    }
    return cumulative.back().first;
  }
};

inline std::vector<std::filesystem::path> trace_dirs() {
  std::vector<std::filesystem::path> dirs;
  if (const char* v = std::getenv("GF_TRACE_DIR"); v != nullptr && *v != '\0') dirs.emplace_back(v);
  dirs.emplace_back("shared/traces/microsoft-itp-elasticflow");
  dirs.emplace_back("../shared/traces/microsoft-itp-elasticflow");
  dirs.emplace_back("/work/shared/traces/microsoft-itp-elasticflow");
  return dirs;
}

// Counts `num_gpu` over every cluster*.csv of `dir` (header:
// job_id,submission_time,duration,num_gpu).
inline std::map<int64_t, uint64_t> read_trace(const std::filesystem::path& dir, int* files) {
  std::map<int64_t, uint64_t> counts;
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) return counts;
  std::vector<std::filesystem::path> csvs;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.starts_with("cluster") && name.ends_with(".csv")) csvs.push_back(e.path());
  }
  std::sort(csvs.begin(), csvs.end());
  for (const auto& path : csvs) {
    std::ifstream in(path);
    std::string line;
    if (!in || !std::getline(in, line)) continue;
    // Column index of num_gpu from the header.
    int col = -1;
    int idx = 0;
    for (size_t start = 0;; ++idx) {
      const size_t comma = line.find(',', start);
      std::string field =
          line.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      while (!field.empty() && (field.back() == '\r' || field.back() == ' ')) field.pop_back();
      if (field == "num_gpu") col = idx;
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    if (col < 0) continue;
    bool any = false;
    while (std::getline(in, line)) {
      size_t start = 0;
      for (int i = 0; i < col && start != std::string::npos; ++i) {
        const size_t comma = line.find(',', start);
        start = comma == std::string::npos ? comma : comma + 1;
      }
      if (start == std::string::npos) continue;
      int64_t gpus = 0;
      const char* first = line.data() + start;
      const auto [ptr, err] = std::from_chars(first, line.data() + line.size(), gpus);
      if (err != std::errc{} || ptr == first || gpus <= 0) continue;
      counts[gpus] += 1;
      any = true;
    }
    if (any) *files += 1;
  }
  return counts;
}

inline const SizeDist& size_dist() {
  static const SizeDist dist = [] {
    SizeDist d;
    std::map<int64_t, uint64_t> counts;
    for (const auto& dir : trace_dirs()) {
      int files = 0;
      counts = read_trace(dir, &files);
      if (!counts.empty()) {
        uint64_t jobs = 0;
        for (const auto& [g, n] : counts) jobs += n;
        d.from_trace = true;
        d.label = "ITP trace, " + std::to_string(files) + " files, " + std::to_string(jobs) +
                  " jobs (" + dir.string() + ")";
        break;
      }
    }
    if (counts.empty()) {
      counts = {{1, 60}, {2, 10}, {4, 10}, {8, 12}, {16, 4}, {32, 3}, {64, 1}};
      d.label =
          "FALLBACK fixed table {1:60%,2:10%,4:10%,8:12%,16:4%,32:3%,64:1%} (ITP trace not "
          "readable)";
    }
    for (const auto& [g, n] : counts) {
      d.total += n;
      d.cumulative.emplace_back(g, d.total);
    }
    return d;
  }();
  return dist;
}

}  // namespace gf::bench
