// Where the loop announces each read view it publishes, for readers that wait without a thread
// of their own (docs/api.md "Watching"): a watch stream asks to be woken once a view newer than
// the one it read is out, and the loop wakes every such waiter after it publishes. Shared by
// the loop and its waiters, so a waiter that outlives its loop (a replica's generation replaced)
// finds the feed closed instead of a dangling loop.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>

#include "journal/journal.h"

namespace gf {

struct FleetView;

class PublishFeed {
 public:
  using Wake = std::function<void()>;

  // The newest view published (null before the first), and whether the feed is closed.
  std::shared_ptr<const FleetView> latest() const;
  bool closed() const;

  // Calls `wake` once: when a view with applied seq > `seen` is published or the feed closes,
  // on the publishing thread; at once, on the caller's, when one already is (or it is closed).
  // Returns an id for cancel(); 0 when it woke at once. `wake` must be cheap and never block:
  // it runs on the loop's thread.
  uint64_t wait_after(Seq seen, Wake wake);
  // Forgets a waiter that no longer wants its wake (a closed connection); no-op after it ran.
  void cancel(uint64_t id);
  size_t waiting() const;

  // The loop's side: a new view (wakes the waiters it is newer for), and the end.
  void publish(std::shared_ptr<const FleetView> view);
  void close();

 private:
  struct Waiter {
    Seq seen;
    Wake wake;
  };
  mutable std::mutex mu_;
  std::shared_ptr<const FleetView> latest_;
  Seq latest_seq_ = 0;
  bool closed_ = false;
  uint64_t next_id_ = 0;
  std::map<uint64_t, Waiter> waiters_;
};

}  // namespace gf
