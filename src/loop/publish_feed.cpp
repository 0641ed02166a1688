#include "loop/publish_feed.h"

#include <utility>
#include <vector>

#include "state/fleet_state.h"

namespace gf {

std::shared_ptr<const FleetView> PublishFeed::latest() const {
  std::lock_guard lock(mu_);
  return latest_;
}

bool PublishFeed::closed() const {
  std::lock_guard lock(mu_);
  return closed_;
}

size_t PublishFeed::waiting() const {
  std::lock_guard lock(mu_);
  return waiters_.size();
}

uint64_t PublishFeed::wait_after(Seq seen, Wake wake) {
  {
    std::lock_guard lock(mu_);
    if (!closed_ && latest_seq_ <= seen) {
      const uint64_t id = ++next_id_;
      waiters_.emplace(id, Waiter{seen, std::move(wake)});
      return id;
    }
  }
  wake();
  return 0;
}

void PublishFeed::cancel(uint64_t id) {
  std::lock_guard lock(mu_);
  waiters_.erase(id);
}

void PublishFeed::publish(std::shared_ptr<const FleetView> view) {
  std::vector<Wake> due;
  {
    std::lock_guard lock(mu_);
    latest_seq_ = view ? view->applied_seq : 0;
    latest_ = std::move(view);
    for (auto it = waiters_.begin(); it != waiters_.end();) {
      if (it->second.seen < latest_seq_) {
        due.push_back(std::move(it->second.wake));
        it = waiters_.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (Wake& w : due) w();
}

void PublishFeed::close() {
  std::vector<Wake> due;
  {
    std::lock_guard lock(mu_);
    closed_ = true;
    latest_.reset();
    for (auto& [id, w] : waiters_) due.push_back(std::move(w.wake));
    waiters_.clear();
  }
  for (Wake& w : due) w();
}

}  // namespace gf
