// The webhook driver (docs/health.md): POSTs alerts, unchanged (the API's JSON), to the configured
// webhook and support webhook. execute() only queues, so the loop never waits on a receiver; one
// worker thread posts in order and reports each outcome back (the health controller journals a
// delivery and retries a failure with capped exponential backoff).
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "loop/controller.h"

namespace gf {

class WebhookDriver final : public Driver {
 public:
  // (alert id, target, alert state, delivered?, error) — called on the worker thread.
  using ReportFn = std::function<void(std::string, std::string, std::string, bool, std::string)>;
  explicit WebhookDriver(ReportFn report,
                         std::chrono::milliseconds timeout = std::chrono::milliseconds(5000));
  ~WebhookDriver() override;
  WebhookDriver(const WebhookDriver&) = delete;
  WebhookDriver& operator=(const WebhookDriver&) = delete;

  void execute(const Intent& intent) override;
  // Stops the worker after the POST in progress; queued deliveries are dropped (the state still
  // shows them undelivered, so the next process sends them).
  void stop();

 private:
  void run();

  ReportFn report_;
  std::chrono::milliseconds timeout_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Intent> queue_;
  bool stopping_ = false;
  std::thread worker_;
};

}  // namespace gf
