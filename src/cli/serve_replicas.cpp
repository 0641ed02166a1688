#include "cli/serve_replicas.h"

#include <spdlog/spdlog.h>

namespace gf {

Result<std::unique_ptr<ReplicatedServer>> ReplicatedServer::open(ReplicatedServeConfig config) {
  std::unique_ptr<ReplicatedServer> s(new ReplicatedServer(std::move(config)));
  GF_ASSIGN_OR_RETURN(s->current_, s->follower());
  return s;
}

ReplicatedServer::~ReplicatedServer() { stop("shutdown"); }

Result<std::shared_ptr<ReplicatedServer::Generation>> ReplicatedServer::follower() {
  auto g = std::make_shared<Generation>();
  GF_ASSIGN_OR_RETURN(g->journal, PostgresJournal::open(config_.store_url, config_.lease));
  g->runtime = config_.make_runtime(*g->journal);
  // Only the loop's state: the cloud driver's bookkeeping is rebuilt when this replica leads.
  GF_RETURN_IF_ERROR(g->runtime->loop().recover(/*shared=*/true));
  g->runtime->loop().follow();
  Api& api = g->runtime->api();
  api.set_replica(
      [this]() {
        ReplicaState s;
        s.role = "follower";
        s.store = "postgres";
        std::lock_guard lock(mu_);
        return manager_ ? manager_->state() : s;
      },
      [this]() -> Result<Json> {
        std::lock_guard lock(mu_);
        return manager_ ? manager_->replicas() : Result<Json>(Json::array());
      });
  return g;
}

std::shared_ptr<ReplicatedServer::Generation> ReplicatedServer::current() const {
  std::lock_guard lock(mu_);
  return current_;
}

HttpResponse ReplicatedServer::handle(HttpRequest request) {
  std::shared_ptr<Generation> g = current();
  return g->runtime->api().handle(std::move(request));
}

Status ReplicatedServer::start(ReplicaOptions options) {
  GF_ASSIGN_OR_RETURN(auto lease, PostgresLease::open(config_.store_url, options.id));
  static RealClock real_clock;  // leases count real time, whatever --sim-speed says
  auto manager =
      std::make_unique<ReplicaManager>(std::move(options), std::move(lease), *this, real_clock);
  ReplicaManager* m = manager.get();
  {
    std::lock_guard lock(mu_);
    manager_ = std::move(manager);
  }
  m->start();
  return ok_status();
}

void ReplicatedServer::stop(const std::string& reason) {
  std::unique_ptr<ReplicaManager> manager;
  {
    std::lock_guard lock(mu_);
    manager = std::move(manager_);
  }
  // The manager's thread first (no promotion or step-down can start after this), then the loop
  // records its stop while the lease is still ours, then the lease is given up.
  if (manager) manager->stop();
  std::shared_ptr<Generation> g = current();
  if (g && g->started) {
    g->runtime->loop().stop(reason);
    g->runtime->stop_drivers();
  }
  if (manager) manager->resign();
}

bool ReplicatedServer::leading() const { return current()->leading; }

Seq ReplicatedServer::applied_seq() const { return current()->runtime->loop().view()->applied_seq; }

Result<Seq> ReplicatedServer::catch_up() {
  if (current()->started) GF_RETURN_IF_ERROR(replace_started());
  std::shared_ptr<Generation> g = current();
  GF_RETURN_IF_ERROR(g->runtime->loop().catch_up().status());
  return g->runtime->loop().view()->applied_seq;
}

Status ReplicatedServer::lead(int64_t epoch) {
  if (current()->started) GF_RETURN_IF_ERROR(replace_started());
  std::shared_ptr<Generation> g = current();
  // From here on, any append of an earlier leader fails in the database: what the journal holds
  // now is final up to its end, and this replica applies all of it before deciding anything.
  GF_RETURN_IF_ERROR(g->journal->set_epoch(epoch));
  GF_RETURN_IF_ERROR(g->runtime->loop().catch_up().status());
  Runtime& rt = *g->runtime;
  rt.cloud().rebuild(rt.loop().state().view().clusters);
  g->started = true;  // start_leading starts the loop; whatever happens next, it was started
  GF_RETURN_IF_ERROR(config_.start_leading(rt, epoch));
  g->leading = true;
  return ok_status();
}

bool ReplicatedServer::failed() const { return current()->runtime->loop().failed(); }

Status ReplicatedServer::step_down(const std::string& why) {
  std::shared_ptr<Generation> old = current();
  // Stop acting first: the old runtime's memory may be ahead of the journal (a refused batch),
  // and its drivers must not act for a replica that no longer leads.
  if (old->started) {
    old->leading = false;
    old->runtime->loop().stop("stepped down: " + why);
    old->runtime->stop_drivers();
  }
  return replace_started();
}

Status ReplicatedServer::replace_started() {
  std::shared_ptr<Generation> old = current();
  if (!old->started) return ok_status();
  if (old->leading) {  // a leader never reaches here, but stop it rather than run two loops
    old->leading = false;
    old->runtime->loop().stop("replaced");
    old->runtime->stop_drivers();
  }
  // Rebuild from what the journal holds; if the database is unreachable, the next round of the
  // manager tries again (reads meanwhile come from the stopped generation's last view).
  GF_ASSIGN_OR_RETURN(auto fresh, follower());
  std::lock_guard lock(mu_);
  current_ = std::move(fresh);
  return ok_status();
}

}  // namespace gf
