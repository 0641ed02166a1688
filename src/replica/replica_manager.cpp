#include "replica/replica_manager.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <condition_variable>

namespace gf {
namespace {

// How often a leader looks at its loop between renewals (a fenced append steps it down).
constexpr Duration kLeaderTick = milliseconds(100);

double secs(Duration d) { return static_cast<double>(d.count()) / 1e6; }

}  // namespace

ReplicaManager::ReplicaManager(ReplicaOptions options, std::unique_ptr<PostgresLease> lease,
                               ReplicaHost& host, const Clock& clock)
    : options_([&] {
        ReplicaOptions o = std::move(options);
        if (o.renew_every <= Duration{}) o.renew_every = o.lease / 3;
        return o;
      }()),
      lease_(std::move(lease)),
      host_(host),
      clock_(clock) {
  state_.role = "follower";
  state_.store = "postgres";
  state_.id = options_.id;
}

ReplicaManager::~ReplicaManager() { stop(); }

void ReplicaManager::start() {
  round();
  thread_ = std::thread([this] { run(); });
}

void ReplicaManager::stop() {
  {
    std::lock_guard lock(wait_mu_);
    stop_ = true;
  }
  wait_cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void ReplicaManager::resign() {
  int64_t epoch = 0;
  {
    std::lock_guard lock(mu_);
    if (state_.role != "leader") return;
    epoch = state_.epoch;
    state_.role = "follower";
    state_.leader_url.clear();
  }
  if (Status st = lease_->resign(epoch); !st.ok()) {
    spdlog::warn("replica {}: could not resign the lease: {}", options_.id, st.message());
  }
}

ReplicaState ReplicaManager::state() const {
  std::lock_guard lock(mu_);
  ReplicaState s = state_;
  if (s.role != "leader" && behind_since_ != Time{})
    s.lag_seconds = secs(clock_.now() - behind_since_);
  return s;
}

Result<Json> ReplicaManager::replicas() const {
  std::lock_guard lock(mu_);
  return replicas_;
}

void ReplicaManager::run() {
  while (!stop_.load()) {
    try {
      round();
    } catch (const std::exception& e) {
      // Nothing here should throw; if something does, the replica stays up and tries again.
      spdlog::error("replica {}: {}", options_.id, e.what());
      wait(options_.renew_every);
    }
  }
}

void ReplicaManager::round() {
  bool leading;
  {
    std::lock_guard lock(mu_);
    leading = state_.role == "leader";
  }
  if (leading)
    lead_round();
  else
    follow_round();
}

void ReplicaManager::follow_round() {
  auto taken = lease_->try_take(options_.lease, options_.url);
  set_store_error(taken.ok() ? "" : taken.status().message());
  if (!taken.ok()) {
    spdlog::warn("replica {}: cannot reach the lease: {}", options_.id, taken.status().message());
    wait(options_.renew_every);
    return;
  }
  if (taken->has_value()) {
    promote(**taken);
    return;
  }
  if (auto info = lease_->read(); info.ok()) {
    std::lock_guard lock(mu_);
    state_.epoch = info->epoch;
    state_.leader_url = info->remaining_s > 0 ? info->url : "";
  }
  // Tail until the next attempt at the lease: every notification wakes a catch-up read.
  const Time next_take = clock_.now() + options_.renew_every;
  while (!stop_.load()) {
    auto applied = host_.catch_up();
    if (!applied.ok()) {
      spdlog::warn("replica {}: catching up failed: {}", options_.id, applied.status().message());
    } else {
      std::lock_guard lock(mu_);
      state_.known_seq = std::max(state_.known_seq, *applied);
      if (*applied >= state_.known_seq) behind_since_ = Time{};
    }
    if (clock_.now() >= next_report_) report();
    const Time now = clock_.now();
    if (now >= next_take) return;
    auto notified = lease_->wait_for_events(next_take - now);
    if (!notified.ok()) {
      wait(options_.renew_every);
      return;
    }
    if (*notified > 0) {
      std::lock_guard lock(mu_);
      state_.known_seq = std::max(state_.known_seq, *notified);
      if (behind_since_ == Time{}) behind_since_ = clock_.now();
    }
  }
}

void ReplicaManager::lead_round() {
  if (host_.failed()) {
    demote(
        "the journal refused an append (another replica took the lease, or the database was "
        "lost)");
    return;
  }
  const Time now = clock_.now();
  if (now - last_renewed_ >= options_.renew_every) {
    int64_t epoch;
    {
      std::lock_guard lock(mu_);
      epoch = state_.epoch;
    }
    auto renewed = lease_->renew(epoch, options_.lease);
    if (renewed.ok() && *renewed) {
      last_renewed_ = now;
    } else if (renewed.ok()) {
      demote(fmt::format("the lease of epoch {} was taken over", epoch));
      return;
    } else if (clock_.now() - last_renewed_ >= options_.lease) {
      set_store_error(renewed.status().message());
      demote("cannot renew the lease: " + renewed.status().message());
      return;
    }
  }
  if (clock_.now() >= next_report_) report();
  auto notified = lease_->wait_for_events(std::min(kLeaderTick, options_.renew_every));
  {
    // What a leader knows is journaled is what it applied (it wrote it).
    const Seq applied = host_.applied_seq();
    std::lock_guard lock(mu_);
    state_.known_seq = std::max(state_.known_seq, applied);
  }
  if (notified.ok() && *notified > 0) {
    std::lock_guard lock(mu_);
    state_.known_seq = std::max(state_.known_seq, *notified);
  }
}

void ReplicaManager::promote(int64_t epoch) {
  // Renewals are due from the moment the lease was taken.
  last_renewed_ = clock_.now();
  spdlog::info("replica {}: took the lease at epoch {}; leading", options_.id, epoch);
  Status st = host_.lead(epoch);
  if (!st.ok()) {
    spdlog::error("replica {}: cannot lead at epoch {}: {}; resigning", options_.id, epoch,
                  st.message());
    (void)lease_->resign(epoch);
    demote("could not start leading: " + st.message());
    return;
  }
  std::lock_guard lock(mu_);
  state_.role = "leader";
  state_.epoch = epoch;
  state_.leader_url = options_.url;
  behind_since_ = Time{};
  next_report_ = Time{};
}

void ReplicaManager::set_store_error(const std::string& error) {
  std::lock_guard lock(mu_);
  state_.store_error = error;
}

void ReplicaManager::demote(const std::string& why) {
  int64_t epoch;
  {
    std::lock_guard lock(mu_);
    epoch = state_.epoch;
    state_.role = "follower";
    state_.leader_url.clear();
  }
  spdlog::warn("replica {}: stepping down from epoch {}: {}", options_.id, epoch, why);
  // If the lease is still ours (the loop failed on its own), give it up so that another replica
  // leads at once; the epoch in its WHERE makes this a no-op when another took it already.
  (void)lease_->resign(epoch);
  if (Status st = host_.step_down(why); !st.ok()) {
    spdlog::critical("replica {}: cannot rebuild a follower: {}", options_.id, st.message());
  }
  next_report_ = Time{};
}

void ReplicaManager::report() {
  ReplicaRow me;
  {
    std::lock_guard lock(mu_);
    me = ReplicaRow{options_.id, options_.url, state_.role, state_.epoch, 0, 0};
  }
  me.applied_seq = host_.applied_seq();
  next_report_ = clock_.now() + options_.renew_every;
  if (Status st = lease_->report(me); !st.ok()) return;
  auto rows = lease_->replicas();
  if (!rows.ok()) return;
  auto info = lease_->read();
  Json out = Json::array();
  for (const ReplicaRow& r : *rows) {
    const bool up = r.seen_ago_s <= 3 * secs(options_.renew_every) + 1;
    const bool leads = info.ok() && info->holder == r.id && info->remaining_s > 0;
    out.push_back({{"Id", r.id},
                   {"Url", r.url},
                   {"Role", !up     ? "down"
                            : leads ? "leader"
                                    : "follower"},
                   {"Epoch", r.epoch},
                   {"AppliedSeq", r.applied_seq},
                   {"SeenSecondsAgo", r.seen_ago_s}});
  }
  // The leader first, then the others by id.
  std::stable_partition(out.begin(), out.end(),
                        [](const Json& r) { return r.value("Role", "") == "leader"; });
  std::lock_guard lock(mu_);
  replicas_ = std::move(out);
}

void ReplicaManager::wait(Duration d) {
  std::unique_lock lock(wait_mu_);
  wait_cv_.wait_for(lock, std::chrono::microseconds(d.count()), [this] { return stop_.load(); });
}

}  // namespace gf
