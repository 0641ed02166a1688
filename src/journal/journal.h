// The journal: the one ordered, durable record of every state change (docs/architecture.md).
// Implementations: sqlite/ (embedded default) and postgres/ (replicated control plane). Both pass
// the same contract suite (tests/unit/journal/journal_contract.h).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "core/time.h"
#include "journal/history.h"

namespace gf {

using Seq = int64_t;  // 1, 2, 3, … gapless; 0 = "before the first event"

struct NewEvent {
  std::string type;             // e.g. "cluster.created"
  std::string payload;          // canonical JSON text
  std::string idempotency_key;  // empty = none
  Time time{};                  // the loop's clock when the event was decided
  // Records this event removes from the hot state, filed in the history table in the same
  // transaction (journal/history.h); empty for most events and for a journal that keeps none.
  std::vector<HistoryRecord> history = {};
};

struct EventRecord {
  Seq seq = 0;
  std::string type;
  std::string payload;
  std::string idempotency_key;
  Time time{};
};

struct AppendResult {
  // One entry per event appended, in order: its sequence number, or for an event whose
  // idempotency key was already journaled (earlier, or earlier in the same batch), the original
  // event's sequence number.
  std::vector<Seq> seqs;
  std::vector<bool> duplicate;
};

// What compaction may remove (docs/operations.md "What is kept where"): events up to and
// including `through` (never past a snapshot the journal still keeps) decided before
// `events_before`, except audit records decided at or after `audit_before`.
struct CompactionRule {
  Seq through = 0;
  Time events_before{};
  Time audit_before{};
};
struct CompactionResult {
  int64_t removed = 0;        // events deleted (and archived, where asked)
  Seq compacted_through = 0;  // below or at this seq the journal may have gaps
};

struct Snapshot {
  Seq seq = 0;       // state after applying every event up to and including seq
  std::string data;  // serialized state
};

class Journal {
 public:
  virtual ~Journal() = default;

  // Appends the batch atomically and durably (one transaction, one fsync): when it returns OK
  // every new event is on disk; on error none is.
  virtual Result<AppendResult> append(std::span<const NewEvent> batch) = 0;

  // Calls fn for every event with seq > after, in order. Stops at the first error fn returns.
  virtual Status replay(Seq after, const std::function<Status(const EventRecord&)>& fn) = 0;

  // The highest sequence number journaled (0 when empty).
  virtual Result<Seq> last_seq() = 0;

  // The sequence number of the event carrying this idempotency key, if any.
  virtual Result<std::optional<Seq>> find_key(const std::string& key) = 0;

  // Stores a snapshot; older ones may be pruned (the latest two are always kept).
  virtual Status save_snapshot(const Snapshot& snapshot) = 0;
  virtual Result<std::optional<Snapshot>> latest_snapshot() = 0;

  // Whether this process may still act as the journal's writer: a replicated journal fails it
  // once another replica has taken over (docs/replication.md); a single-writer journal always
  // passes. The loop asks before handing drivers the intents of a batch that appended nothing.
  virtual Status check_fence() { return ok_status(); }

  // Whether append reads the payload text of events of `type`. Every journal that keeps its
  // records does; one that keeps none may say no for the types its observer ignores, and the loop
  // then writes no text for them (ObservedJournal; docs/architecture.md "The loop, one batch at a
  // time").
  virtual bool needs_payload(std::string_view type) const {
    (void)type;
    return true;
  }

  // Whether append files NewEvent::history (a journal that keeps no table drops it, and the loop
  // then builds none).
  virtual bool keeps_history() const { return false; }
  // A reader of the history table for other threads (the API's), on a connection of its own;
  // an error when this journal keeps none.
  virtual Result<std::unique_ptr<HistoryReader>> open_history_reader() {
    return not_found_error("this journal keeps no history");
  }
  // Removes what `rule` allows from the live journal. A journal that never compacts removes
  // nothing. Replay after `compacted_through` is unchanged: compaction only removes events that
  // lie at or below a snapshot it keeps.
  virtual Result<CompactionResult> compact(const CompactionRule& rule) {
    (void)rule;
    return CompactionResult{};
  }
  // The seq at or below which events may be missing (removed by compaction); 0 when none are.
  virtual Result<Seq> compacted_through() { return Seq{0}; }
};

}  // namespace gf
