#include "journal/observed/observed_journal.h"

#include <utility>

namespace gf {

ObservedJournal::ObservedJournal(Journal* inner, Observer observer, ObservedTypes observed)
    : inner_(inner), observer_(std::move(observer)), observed_(std::move(observed)) {}

bool ObservedJournal::needs_payload(std::string_view type) const {
  if (inner_ != nullptr) return inner_->needs_payload(type);
  return !observed_ || observed_(type);
}

Result<AppendResult> ObservedJournal::append(std::span<const NewEvent> batch) {
  AppendResult result;
  if (inner_ != nullptr) {
    GF_ASSIGN_OR_RETURN(result, inner_->append(batch));
  } else {
    result.seqs.reserve(batch.size());
    result.duplicate.reserve(batch.size());
    // A key is taken only once the whole batch is numbered: on no path does a batch half-append.
    std::unordered_map<std::string, Seq> batch_keys;
    Seq next = last_;
    for (const NewEvent& e : batch) {
      if (!e.idempotency_key.empty()) {
        std::optional<Seq> original;
        if (auto k = keys_.find(e.idempotency_key); k != keys_.end()) original = k->second;
        if (auto k = batch_keys.find(e.idempotency_key); k != batch_keys.end())
          original = k->second;
        if (original) {
          result.seqs.push_back(*original);
          result.duplicate.push_back(true);
          continue;
        }
        batch_keys.emplace(e.idempotency_key, next + 1);
      }
      result.seqs.push_back(++next);
      result.duplicate.push_back(false);
    }
    last_ = next;
    keys_.merge(batch_keys);
  }
  EventRecord rec;
  for (size_t i = 0; i < batch.size(); ++i) {
    if (result.duplicate[i]) continue;
    rec.seq = result.seqs[i];
    rec.type = batch[i].type;
    rec.payload = batch[i].payload;
    rec.idempotency_key = batch[i].idempotency_key;
    rec.time = batch[i].time;
    GF_RETURN_IF_ERROR(observer_(rec));
  }
  return result;
}

Status ObservedJournal::replay(Seq after, const std::function<Status(const EventRecord&)>& fn) {
  if (inner_ != nullptr) return inner_->replay(after, fn);
  if (after < last_) {
    return internal_error(
        "this journal keeps no records (a simulation without --journal): cannot replay after seq " +
        std::to_string(after));
  }
  return ok_status();
}

Result<Seq> ObservedJournal::last_seq() {
  if (inner_ != nullptr) return inner_->last_seq();
  return last_;
}

Result<std::optional<Seq>> ObservedJournal::find_key(const std::string& key) {
  if (inner_ != nullptr) return inner_->find_key(key);
  auto it = keys_.find(key);
  if (it == keys_.end()) return std::optional<Seq>();
  return std::optional<Seq>(it->second);
}

Status ObservedJournal::save_snapshot(const Snapshot& snapshot) {
  if (inner_ != nullptr) return inner_->save_snapshot(snapshot);
  snapshot_ = snapshot;
  return ok_status();
}

Result<std::optional<Snapshot>> ObservedJournal::latest_snapshot() {
  if (inner_ != nullptr) return inner_->latest_snapshot();
  return snapshot_;
}

Status ObservedJournal::check_fence() {
  return inner_ != nullptr ? inner_->check_fence() : ok_status();
}

Result<std::unique_ptr<HistoryReader>> ObservedJournal::open_history_reader() {
  if (inner_ == nullptr) return Journal::open_history_reader();
  return inner_->open_history_reader();
}

Result<CompactionResult> ObservedJournal::compact(const CompactionRule& rule) {
  if (inner_ == nullptr) return CompactionResult{};
  return inner_->compact(rule);
}

Result<Seq> ObservedJournal::compacted_through() {
  if (inner_ == nullptr) return Seq{0};
  return inner_->compacted_through();
}

}  // namespace gf
