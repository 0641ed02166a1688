#include "loop/control_loop.h"

#include "core/memory.h"
#include "state/job_history.h"
#include "state/plane_events.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <chrono>

namespace gf {

ControlLoop::ControlLoop(LoopOptions options, Clock& clock, Journal& journal, Metrics& metrics)
    : options_(options),
      clock_(clock),
      journal_(journal),
      metrics_(metrics),
      snapshot_loop_latency_(metrics.histogram(
          "gpufleet_journal_snapshot_loop_seconds",
          "Time one snapshot held the control loop (the state's image and the save).")) {
  publish();
}

ControlLoop::~ControlLoop() {
  if (thread_.joinable()) stop("shutdown");
  feed_->close();
}

Status ControlLoop::recover(bool shared) {
  const int64_t t0 = monotonic_nanos();
  GF_ASSIGN_OR_RETURN(auto snapshot, journal_.latest_snapshot());
  if (snapshot) {
    GF_ASSIGN_OR_RETURN(Json j, parse_json(snapshot->data, kStoredTextLimits));
    auto restored = FleetState::from_json(j);
    if (!restored.ok())
      return restored.status().with_prefix(fmt::format("snapshot at {}", snapshot->seq));
    state_ = std::move(restored).value();
    if (state_.applied_seq() != snapshot->seq) {
      return internal_error(fmt::format("snapshot labelled {} holds state at {}", snapshot->seq,
                                        state_.applied_seq()));
    }
    last_snapshot_seq_ = snapshot->seq;
    last_snapshot_bytes_ = static_cast<int64_t>(snapshot->data.size());
  }
  for (EventObserver* o : observers_) {
    GF_RETURN_IF_ERROR(o->restore(state_).with_prefix("rebuilding from the snapshot"));
  }
  const int64_t t1 = monotonic_nanos();
  const Seq from = state_.applied_seq();
  GF_RETURN_IF_ERROR(journal_.replay(state_.applied_seq(), [this](const EventRecord& r) {
    Result<Json> payload = parse_json(r.payload, kStoredTextLimits);
    if (!payload.ok()) {
      return payload.status().with_prefix(fmt::format("event {} ({})", r.seq, r.type));
    }
    return apply(r, *payload);
  }));
  GF_ASSIGN_OR_RETURN(Seq last, journal_.last_seq());
  if (last < state_.applied_seq() || (!shared && last != state_.applied_seq())) {
    return internal_error(
        fmt::format("journal ends at {} but replay reached {}", last, state_.applied_seq()));
  }
  spdlog::info("recovered: snapshot at seq {} ({} KB) in {} ms, then {} events replayed in {} ms",
               snapshot ? snapshot->seq : 0, snapshot ? snapshot->data.size() / 1024 : 0,
               (t1 - t0) / 1'000'000, state_.applied_seq() - from,
               (monotonic_nanos() - t1) / 1'000'000);
  gf::release_free_memory();
  controllers_dirty_ = true;
  publish();
  return ok_status();
}

void ControlLoop::follow() {
  threaded_ = true;
  publish();
}

Result<int64_t> ControlLoop::catch_up() {
  int64_t applied = 0;
  GF_RETURN_IF_ERROR(journal_.replay(state_.applied_seq(), [&](const EventRecord& r) -> Status {
    Result<Json> payload = parse_json(r.payload, kStoredTextLimits);
    if (!payload.ok()) {
      return payload.status().with_prefix(fmt::format("event {} ({})", r.seq, r.type));
    }
    GF_RETURN_IF_ERROR(apply(r, *payload));
    // Publish in steps during a long catch-up, so readers see progress.
    if (++applied % 10000 == 0) publish();
    return ok_status();
  }));
  controllers_dirty_ = true;
  if (applied > 0) publish();
  return applied;
}

Seq ControlLoop::published_seq() const {
  std::lock_guard lock(view_mu_);
  // Manual mode (a stale view): the caller's thread is the one that drives the loop.
  if (view_stale_) return state_.applied_seq();
  return view_ ? view_->applied_seq : 0;
}

bool ControlLoop::wait_for_seq(Seq seq, Duration timeout) const {
  std::unique_lock lock(view_mu_);
  return view_cv_.wait_for(lock, timeout, [&] {
    if (view_stale_) return state_.applied_seq() >= seq;
    return view_ && view_->applied_seq >= seq;
  });
}

void ControlLoop::add_controller(Controller* controller) {
  controllers_.push_back(controller);
  wake_[controller] = std::nullopt;
}

void ControlLoop::add_driver(const std::string& name, Driver* driver) { drivers_[name] = driver; }

void ControlLoop::add_observer(EventObserver* observer) { observers_.push_back(observer); }

Status ControlLoop::apply(const EventRecord& record, const Json& payload) {
  GF_RETURN_IF_ERROR(state_.apply(record, payload));
  for (EventObserver* o : observers_) GF_RETURN_IF_ERROR(o->observe(state_, record, payload));
  return ok_status();
}

Status ControlLoop::apply_submitted(const EventRecord& record, Job job) {
  const std::string id = job.id;
  GF_RETURN_IF_ERROR(state_.apply_submitted(record, std::move(job)));
  for (EventObserver* o : observers_) {
    GF_RETURN_IF_ERROR(o->observe_submitted(state_, record, id));
  }
  return ok_status();
}

std::future<Outcome> ControlLoop::submit(Request request) {
  Pending p{std::move(request), {}};
  auto future = p.promise.get_future();
  {
    std::lock_guard lock(mu_);
    if (failed_ || (stopping_ && !thread_.joinable())) {
      Outcome o;
      o.status = unavailable_error(
          failed_ ? "writes are paused: " + failure_ +
                        "; reads go on, and writes resume by themselves once the journal takes "
                        "them again (docs/operations.md); nothing of this request was recorded"
                  : "the control plane is not accepting writes (stopped)");
      p.promise.set_value(std::move(o));
      return future;
    }
    queue_.push_back(std::move(p));
  }
  cv_.notify_one();
  return future;
}

void ControlLoop::submit_at(Time at, Request request) {
  {
    std::lock_guard lock(mu_);
    timers_.schedule(at, [this, r = std::move(request)]() mutable {
      queue_.push_back(Pending{std::move(r), {}});  // runs with mu_ held (take_pending)
    });
    // A loop waiting for an older wake-up time must look again (a timer may now be due first).
    timers_changed_ = true;
  }
  cv_.notify_one();
}

std::optional<Time> ControlLoop::next_wake() const {
  std::optional<Time> next;
  {
    std::lock_guard lock(mu_);
    next = timers_.next_due();
  }
  for (const auto& [c, t] : wake_) {
    if (t && (!next || *t < *next)) next = t;
  }
  return next;
}

bool ControlLoop::work_due(Time now) const {
  if (controllers_dirty_) return true;
  for (const auto& [c, t] : wake_) {
    if (t && *t <= now) return true;
  }
  std::lock_guard lock(mu_);
  if (!queue_.empty()) return true;
  auto due = timers_.next_due();
  return due && *due <= now;
}

std::vector<ControlLoop::Pending> ControlLoop::take_pending(Time now) {
  std::lock_guard lock(mu_);
  while (auto fn = timers_.pop_due(now)) (*fn)();
  std::vector<Pending> out;
  while (!queue_.empty() && out.size() < options_.max_batch_requests) {
    out.push_back(std::move(queue_.front()));
    queue_.pop_front();
  }
  return out;
}

size_t ControlLoop::drain() {
  // A controller that keeps asking to be woken "now" would spin forever: cap one drain.
  constexpr size_t kMaxBatchesPerDrain = 100000;
  size_t batches = 0;
  while (!failed() && batches < kMaxBatchesPerDrain && work_due(clock_.now())) {
    const Time now = clock_.now();
    run_batch(now, take_pending(now), {});
    ++batches;
  }
  return batches;
}

bool ControlLoop::stage(const Event& event, const std::string& key, Time now,
                        std::vector<NewEvent>& batch) {
  if (!key.empty() && state_.find_key(key)) return false;
  NewEvent ne{event.type, {}, key, now};
  EventRecord rec{state_.applied_seq() + 1, ne.type, {}, ne.idempotency_key, ne.time};
  if (event.job && !journal_.needs_payload(event.type)) {
    // Nothing reads this event's text (a simulation that keeps no journal): the job is applied
    // as decided, and neither encoded nor decoded.
    // The event's only owner gives its job up (it is staged once); a shared one is copied.
    Job job = event.job.use_count() == 1 ? std::move(*event.job) : *event.job;
    if (Status st = apply_submitted(rec, std::move(job)); !st.ok()) {
      spdlog::critical("control loop: {}", st.to_string());
      std::abort();
    }
    batch.push_back(std::move(ne));
    return true;
  }
  // Memory must hold exactly what replay will rebuild: a payload with ill-formed UTF-8 (a bug
  // upstream; API input is checked) is journaled with U+FFFD and applied as journaled.
  Json cleaned;
  Json built;
  if (event.job) built = event.payload_json();
  const Json* applied = event.job ? &built : &event.payload;
  try {
    ne.payload = applied->dump();
  } catch (const Json::type_error&) {
    spdlog::error("control loop: {} event with ill-formed UTF-8; journaled with U+FFFD",
                  event.type);
    ne.payload = safe_dump(*applied);
    cleaned = Json::parse(ne.payload);
    applied = &cleaned;
  }
  Status st = apply(rec, *applied);
  if (!st.ok()) {
    // An event we decided ourselves does not apply: a bug. Crash loudly rather than diverge.
    spdlog::critical("control loop: {}", st.to_string());
    std::abort();
  }
  // What the event removed from memory is filed in history in the same transaction.
  if (!state_.retired_jobs().empty() && journal_.keeps_history()) {
    const bool deleted = event.type == event_type::kJobDeleted;
    for (const JobPtr& job : state_.retired_jobs())
      ne.history.push_back(job_history_record(*job, deleted, now));
  }
  batch.push_back(std::move(ne));
  return true;
}

void ControlLoop::run_controllers(Time now, std::vector<NewEvent>& batch,
                                  std::vector<Intent>& intents) {
  for (int round = 0; round < options_.max_controller_rounds; ++round) {
    bool produced = false;
    for (Controller* c : controllers_) {
      ControllerDecision d = c->decide(state_, now);
      for (const Event& e : d.events) produced |= stage(e, e.idempotency_key, now, batch);
      for (Intent& i : d.intents) intents.push_back(std::move(i));
      // A wake-up at or before now would spin the loop; this pass already served it.
      wake_[c] = d.wake_at && *d.wake_at > now ? d.wake_at : std::nullopt;
    }
    if (!produced) return;
  }
  spdlog::warn("control loop: controllers still producing events after {} rounds",
               options_.max_controller_rounds);
}

namespace {

// The stored form of a request's idempotency key: the key and the fingerprint of the call.
constexpr std::string_view kFingerprintSeparator = " #";

std::string stored_key(const Request& req) {
  if (req.idempotency_key.empty() || req.fingerprint.empty()) return req.idempotency_key;
  return req.idempotency_key + std::string(kFingerprintSeparator) + req.fingerprint;
}

}  // namespace

void ControlLoop::run_request(const Request& req, Time now, Outcome& outcome,
                              std::vector<NewEvent>& batch, std::vector<Intent>& intents) {
  const std::string key = stored_key(req);
  Result<Decision> decided = internal_error("not decided");
  try {
    if (!req.idempotency_key.empty()) {
      // A key journaled before fingerprints existed matches any call.
      std::optional<Seq> original = state_.find_key(key);
      if (!original && key != req.idempotency_key) original = state_.find_key(req.idempotency_key);
      if (original) {
        outcome.duplicate = true;
        outcome.seq = *original;
        if (req.on_duplicate) outcome.response = req.on_duplicate(state_, *original);
        return;
      }
      if (key != req.idempotency_key) {
        const std::string prefix = req.idempotency_key + std::string(kFingerprintSeparator);
        if (auto other = state_.find_key_prefix(prefix)) {
          outcome.status = conflict_error(
              fmt::format("Idempotency-Key: the key was reused with a different request (first "
                          "used at seq {}); use a new key for a new request",
                          *other));
          return;
        }
      }
    }
    decided = req.handle ? req.handle(state_, now)
                         : Result<Decision>(internal_error("request without handler"));
  } catch (const std::exception& e) {
    // A handler decides before anything is applied, so nothing of the request changed state.
    spdlog::error("control loop: request {} failed: {}", req.name, e.what());
    decided = internal_error("the server failed to handle " + req.name + "; nothing was changed");
  } catch (...) {
    spdlog::error("control loop: request {} failed with a non-standard exception", req.name);
    decided = internal_error("the server failed to handle " + req.name + "; nothing was changed");
  }
  if (!decided.ok()) {
    outcome = Outcome{};
    outcome.status = decided.status();
    return;
  }
  Decision& d = decided.value();
  if (req.dry_run) {  // validated: answer as the request would, change nothing
    outcome.response = std::move(d.response);
    outcome.seq = state_.applied_seq();
    return;
  }
  // Applying is outside the guard: an event we decided that does not apply is a bug, and
  // stage() stops the process rather than serve a half-applied state.
  for (size_t i = 0; i < d.events.size(); ++i) {
    const Event& e = d.events[i];
    stage(e, i == 0 && !key.empty() ? key : e.idempotency_key, now, batch);
  }
  for (Intent& in : d.intents) intents.push_back(std::move(in));
  outcome.response = std::move(d.response);
  outcome.seq = state_.applied_seq();
}

void ControlLoop::stage_audit(const Request& req, const Outcome& outcome, Time now,
                              std::vector<NewEvent>& batch) {
  Json payload = *req.audit;
  if (outcome.status.ok()) {
    payload["Code"] = req.success_code;
  } else {
    payload["Code"] = http_status(outcome.status.code());
    payload["Error"] = std::string(error_type_name(outcome.status.code()));
  }
  stage(Event{std::string(event_type::kAuditRecorded), std::move(payload), ""}, "", now, batch);
}

bool ControlLoop::run_batch(Time now, std::vector<Pending> requests,
                            const std::vector<Event>& extra) {
  std::vector<NewEvent> batch;
  std::vector<Intent> intents;
  std::vector<Ack> acks;
  acks.reserve(requests.size());

  for (Pending& p : requests) {
    Ack ack{std::move(p.promise), {}};
    const Request& req = p.request;
    if (req.ticket) {
      TicketState expected = TicketState::kQueued;
      if (!req.ticket->compare_exchange_strong(expected, TicketState::kTaken)) {
        // Its caller already answered "not applied": it must never run.
        ack.outcome.status =
            unavailable_error("the request was abandoned by its caller before it ran");
        acks.push_back(std::move(ack));
        continue;
      }
    }
    run_request(req, now, ack.outcome, batch, intents);
    if (req.audit) stage_audit(req, ack.outcome, now, batch);
    acks.push_back(std::move(ack));
  }
  for (const Event& e : extra) stage(e, e.idempotency_key, now, batch);

  // Controllers run when something they look at may have changed: events were applied, a
  // request ran (a driver's report or an agent's heartbeat may change a controller's memory
  // without an event), or a wake-up one of them asked for is due. Reads never come here.
  bool due = false;
  for (const auto& [c, t] : wake_) due |= t && *t <= now;
  if (!batch.empty() || !requests.empty() || controllers_dirty_ || due) {
    const int64_t c0 = monotonic_nanos();
    run_controllers(now, batch, intents);
    const int64_t spent = monotonic_nanos() - c0;
    metrics_.controller_latency.observe_nanos(spent);
    if (batch_timings_) batch_timings_->push_back(spent);
    controllers_dirty_ = false;
  }

  if (!commit(batch, intents, acks)) return false;
  metrics_.loop_batches.inc();

  publish();  // before answering: a caller reads its own write right after the answer
  for (Ack& a : acks) a.promise.set_value(std::move(a.outcome));
  for (const Intent& in : intents) {
    auto it = drivers_.find(in.driver);
    if (it == drivers_.end()) {
      spdlog::error("control loop: no driver \"{}\" for intent {}", in.driver, in.kind);
      continue;
    }
    it->second->execute(in);
  }
  maybe_snapshot(false);
  return true;
}

// The batch made durable (one append, its seqs checked against memory), or, when it appended
// nothing but hands drivers intents, the fence checked. False: the loop failed every waiter.
bool ControlLoop::commit(const std::vector<NewEvent>& batch, const std::vector<Intent>& intents,
                         std::vector<Ack>& acks) {
  if (!batch.empty()) {
    const Seq expected_first = state_.applied_seq() - static_cast<Seq>(batch.size()) + 1;
    const int64_t t0 = monotonic_nanos();
    auto appended = journal_.append(batch);
    metrics_.append_latency.observe_nanos(monotonic_nanos() - t0);
    if (!appended.ok()) {
      fail("journal append failed: " + appended.status().message(), acks);
      return false;
    }
    const auto& seqs = appended->seqs;
    for (size_t i = 0; i < seqs.size(); ++i) {
      if (seqs[i] != expected_first + static_cast<Seq>(i) || appended->duplicate[i]) {
        fail(fmt::format("journal and memory disagree at seq {} (another writer?)",
                         expected_first + i),
             acks);
        return false;
      }
    }
    metrics_.events_appended.inc(batch.size());
    for (const NewEvent& e : batch) bytes_since_snapshot_ += static_cast<int64_t>(e.payload.size());
  } else if (!intents.empty()) {
    // Nothing was appended, so nothing checked that this process still leads: a replica whose
    // lease was taken over must not act (docs/replication.md).
    if (Status fenced = journal_.check_fence(); !fenced.ok()) {
      fail("journal fence check failed: " + fenced.message(), acks);
      return false;
    }
  }
  return true;
}

void ControlLoop::fail(const std::string& why, std::vector<Ack>& acks) {
  spdlog::critical("control loop stopped taking writes: {}", why);
  std::deque<Pending> rest;
  {
    std::lock_guard lock(mu_);
    failed_ = true;
    failure_ = why;
    rest.swap(queue_);
  }
  Outcome o;
  o.status = unavailable_error("writes are paused: " + why +
                               "; reads go on, and writes resume by themselves once the journal "
                               "takes them again (docs/operations.md); nothing of this request "
                               "was recorded");
  for (Ack& a : acks) a.promise.set_value(o);
  for (Pending& p : rest) p.promise.set_value(o);
  cv_.notify_all();
}

void ControlLoop::publish() {
  if (!threaded_ && (view_ || view_stale_)) {
    // Manual mode: the next view() builds one. Dropping the old view now unshares the state's
    // leaves, so the events until then change them in place instead of copying them.
    std::lock_guard lock(view_mu_);
    view_.reset();
    view_stale_ = true;
    return;
  }
  auto v = make_view();
  {
    std::lock_guard lock(view_mu_);
    view_ = v;
    view_stale_ = false;
  }
  view_cv_.notify_all();
  feed_->publish(std::move(v));
}

std::shared_ptr<const FleetView> ControlLoop::view() const {
  std::lock_guard lock(view_mu_);
  if (view_stale_) {
    view_ = make_view();
    view_stale_ = false;
  }
  return view_;
}

std::shared_ptr<const FleetView> ControlLoop::make_view() const {
  auto v = std::make_shared<FleetView>(state_.view());
  for (EventObserver* o : observers_) o->publish(state_, *v);
  return v;
}

bool ControlLoop::failed() const {
  std::lock_guard lock(mu_);
  return failed_;
}

std::string ControlLoop::failure() const {
  std::lock_guard lock(mu_);
  return failure_;
}

void ControlLoop::maybe_snapshot(bool force) {
  finish_pending_snapshot(force);
  const Seq seq = state_.applied_seq();
  if (seq == last_snapshot_seq_ || pending_snapshot_) return;
  if (!force && !snapshot_due(seq)) return;
  const int64_t t0 = monotonic_nanos();
  bytes_since_snapshot_ = 0;
  if (threaded_ && !force) {
    // The image shares the state's persistent maps: serializing it (most of a snapshot's cost)
    // runs on another thread while the loop goes on; the loop saves it when it is ready.
    auto image = std::make_shared<const FleetState::Image>(state_.image());
    pending_snapshot_ = PendingSnapshot{
        seq, t0, std::async(std::launch::async, [image] { return image->to_text(); })};
    snapshot_loop_latency_.observe_nanos(monotonic_nanos() - t0);
    return;
  }
  save_snapshot(seq, safe_dump(state_.to_json()), t0);
}

// Every snapshot_every_events at the soonest, and not before the journal grew by a quarter of the
// last snapshot's bytes: snapshotting costs what the state weighs, replay what the journal since
// weighs (about four times a snapshot's load per byte), so a restart replays at most about one
// snapshot load's worth, and the snapshots of a large state are not taken more often than they pay
// for (docs/operations.md "Restart time").
bool ControlLoop::snapshot_due(Seq seq) const {
  return options_.snapshot_every_events > 0 &&
         seq - last_snapshot_seq_ >= options_.snapshot_every_events &&
         4 * bytes_since_snapshot_ >= last_snapshot_bytes_;
}

void ControlLoop::finish_pending_snapshot(bool wait) {
  if (!pending_snapshot_) return;
  std::future<std::string>& data = pending_snapshot_->data;
  if (!wait && data.wait_for(std::chrono::seconds(0)) != std::future_status::ready) return;
  PendingSnapshot done = std::move(*pending_snapshot_);
  pending_snapshot_.reset();
  std::string text;
  try {
    text = done.data.get();
  } catch (const std::exception& e) {
    // Not fatal: the journal still holds everything; the next snapshot tries again.
    spdlog::error("snapshot at seq {} failed: {}", done.seq, e.what());
    return;
  }
  save_snapshot(done.seq, std::move(text), done.started_nanos);
}

void ControlLoop::save_snapshot(Seq seq, std::string data, int64_t started_nanos) {
  const int64_t saving = monotonic_nanos();
  const int64_t size = static_cast<int64_t>(data.size());
  Status st = journal_.save_snapshot(Snapshot{seq, std::move(data)});
  const int64_t saved = monotonic_nanos();
  metrics_.snapshot_latency.observe_nanos(saved - started_nanos);
  // A threaded loop counted the image when it took it; the save holds the loop too.
  snapshot_loop_latency_.observe_nanos(threaded_ ? saved - saving : saved - started_nanos);
  if (!st.ok()) {
    // Not fatal: the journal still holds everything; recovery replays more.
    spdlog::error("snapshot at seq {} failed: {}", seq, st.to_string());
    return;
  }
  gf::release_free_memory();
  const Seq older = last_snapshot_seq_;
  last_snapshot_seq_ = seq;
  last_snapshot_bytes_ = size;
  metrics_.snapshots.inc();
  if (options_.journal_retention && older > 0) compact(older);
}

void ControlLoop::compact(Seq through) {
  // Idempotency keys answer repeats for 24 hours (docs/api.md): never compact younger events.
  const Time now = clock_.now();
  const Duration keep = std::max<Duration>(*options_.journal_retention, std::chrono::hours(24));
  const CompactionRule rule{through, now - keep, now - options_.audit_retention};
  Result<CompactionResult> done = journal_.compact(rule);
  if (!done.ok()) {
    // Not fatal: the journal keeps more than it must; the next snapshot tries again.
    spdlog::error("journal compaction through seq {} failed: {}", through,
                  done.status().to_string());
    return;
  }
  metrics_.journal_compacted_events.inc(done->removed);
}

void ControlLoop::start() {
  threaded_ = true;
  publish();
  thread_ = std::thread([this] { thread_main(); });
}

void ControlLoop::stop(const std::string& reason) {
  {
    std::lock_guard lock(mu_);
    if (stopping_) return;
    stopping_ = true;
    stop_reason_ = reason;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void ControlLoop::thread_main() {
  while (true) {
    {
      std::unique_lock lock(mu_);
      auto has_work = [this] { return stopping_ || failed_ || !queue_.empty() || timers_changed_; };
      timers_changed_ = false;
      if (!has_work()) {
        lock.unlock();
        std::optional<Time> wake = next_wake();
        lock.lock();
        if (controllers_dirty_) {
          // run a batch right away
        } else if (wake) {
          cv_.wait_until(lock, clock_.wall_time_of(*wake), has_work);
        } else {
          cv_.wait(lock, has_work);
        }
      }
      if (failed_) return;
      if (stopping_ && queue_.empty()) break;
    }
    const Time now = clock_.now();
    run_batch(now, take_pending(now), {});
  }
  // Graceful stop: record it, snapshot, and let the owner close the journal.
  Event stopped = event_codec::to_event(plane_events::Stopped{stop_reason_});
  const Time now = clock_.now();
  if (run_batch(now, take_pending(now), {stopped})) maybe_snapshot(true);
}

}  // namespace gf
