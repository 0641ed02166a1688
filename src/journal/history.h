// The history table: records that left the control plane's hot state (a finished job past its
// retention, a deleted workload), kept queryable in the journal's own store (docs/operations.md
// "What is kept where"). A record is filed in the same transaction as the event that removed it
// from memory, so a crash can never lose one nor file one twice.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "core/time.h"

namespace gf {

// One stretch a job ran, kept beside its record so billing over any past window stays exact
// (docs/operations.md "What is kept where").
struct HistoryRun {
  std::string job_id;
  std::string job_queue;
  std::string quota_share;
  std::string cluster;
  Time start{};
  Time end{};
  int64_t micros_per_hour = 0;
};

struct HistoryRecord {
  int64_t row = 0;  // the table's own order (filing order); set by the journal
  int64_t seq = 0;  // the journal event that filed it; set by the journal
  std::string kind = "job";
  std::string id;
  std::string name;
  std::string tenant;  // where it queued: job queue, LocalQueue or namespace ("" = none)
  std::string state;   // SUCCEEDED | FAILED | DELETED
  Time created{};
  Time ended{};
  std::string record;            // the record's canonical JSON (stored compressed)
  std::vector<HistoryRun> runs;  // its closed runs (kind job)
};

// A page of history, oldest filed first. Every member is a filter that must hold.
struct HistoryQuery {
  std::string kind = "job";
  std::optional<std::string> id;
  std::optional<std::string> name;
  std::optional<std::string> tenant;
  std::optional<std::string> state;
  std::optional<Time> since;  // ended at or after
  std::optional<Time> until;  // ended before
  int64_t after_row = 0;      // the page after this row (a page's next token)
  size_t limit = 100;
  static constexpr size_t kMaxLimit = 1000;
};

struct HistoryPage {
  std::vector<HistoryRecord> records;
  std::optional<int64_t> next_row;  // set when more may follow
};

// Reads the history table. Thread-safe: the API's workers share one.
class HistoryReader {
 public:
  virtual ~HistoryReader() = default;
  virtual Result<HistoryPage> query(const HistoryQuery& q) = 0;
  // How many records the table holds (diagnostics, benchmarks).
  virtual Result<int64_t> count() = 0;
  // The runs of filed jobs that overlap [from, to), on `cluster` when it is not empty.
  virtual Result<std::vector<HistoryRun>> runs_between(Time from, Time to,
                                                       const std::string& cluster) = 0;
};

// zlib (deflate) for the record column; `label` names the row in an error.
std::string compress_record(std::string_view text);
Result<std::string> decompress_record(std::string_view data, std::string_view label);

}  // namespace gf
