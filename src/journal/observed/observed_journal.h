// A journal that hands every record it appends to an observer as it is appended
// (docs/architecture.md "Folders and what each may include"). With an inner journal it forwards to
// it (which numbers, deduplicates and stores); without one it stores nothing: it numbers appends,
// remembers their idempotency keys and the latest snapshot, and keeps no record, so it can replay
// nothing that was appended. A simulation uses it so that its metrics follow the run as it goes
// instead of reading a journal back afterwards, and keeps no journal on disk unless asked
// (docs/scenarios.md "Outputs").
//
// Threading: like the journal it wraps, one thread at a time (the control loop).
#pragma once

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>

#include "journal/journal.h"

namespace gf {

class ObservedJournal final : public Journal {
 public:
  // Called once per appended record (never for a duplicate), in sequence order, after the inner
  // journal (if any) appended it. An error fails the append; with an inner journal the batch is
  // then already stored, so the caller must stop (the control loop does: it stops on any append
  // error).
  using Observer = std::function<Status(const EventRecord&)>;

  // The types whose payload the observer reads (the others reach it with an empty payload when
  // nothing else keeps them).
  using ObservedTypes = std::function<bool(std::string_view type)>;

  // `inner` (may be null: keep nothing) must outlive this journal. Without `observed`, every
  // payload is read.
  ObservedJournal(Journal* inner, Observer observer, ObservedTypes observed = nullptr);

  Result<AppendResult> append(std::span<const NewEvent> batch) override;
  // With an inner journal, its replay. Without one there is nothing to replay: an error when
  // asked for any record appended (after < last_seq()), else no call at all.
  Status replay(Seq after, const std::function<Status(const EventRecord&)>& fn) override;
  Result<Seq> last_seq() override;
  Result<std::optional<Seq>> find_key(const std::string& key) override;
  Status save_snapshot(const Snapshot& snapshot) override;
  Result<std::optional<Snapshot>> latest_snapshot() override;
  Status check_fence() override;
  // With an inner journal, its answer; without one, whether the observer reads the type.
  bool needs_payload(std::string_view type) const override;
  // History and compaction are the inner journal's (none without one).
  bool keeps_history() const override { return inner_ != nullptr && inner_->keeps_history(); }
  Result<std::unique_ptr<HistoryReader>> open_history_reader() override;
  Result<CompactionResult> compact(const CompactionRule& rule) override;
  Result<Seq> compacted_through() override;

 private:
  Journal* inner_;
  Observer observer_;
  ObservedTypes observed_;
  // Without an inner journal only.
  Seq last_ = 0;
  std::unordered_map<std::string, Seq> keys_;
  std::optional<Snapshot> snapshot_;
};

}  // namespace gf
