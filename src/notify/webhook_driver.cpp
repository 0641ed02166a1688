#include "notify/webhook_driver.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <httplib.h>
#include <spdlog/spdlog.h>

namespace gf {

namespace {

// "http://host:port/path" → (scheme://host:port, /path).
std::pair<std::string, std::string> split_url(const std::string& url) {
  const size_t scheme = url.find("://");
  const size_t path = url.find('/', scheme == std::string::npos ? 0 : scheme + 3);
  if (path == std::string::npos) return {url, "/"};
  return {url.substr(0, path), url.substr(path)};
}

}  // namespace

WebhookDriver::WebhookDriver(ReportFn report, std::chrono::milliseconds timeout)
    : report_(std::move(report)), timeout_(timeout), worker_([this] { run(); }) {}

WebhookDriver::~WebhookDriver() { stop(); }

void WebhookDriver::stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (worker_.joinable()) worker_.join();
}

void WebhookDriver::execute(const Intent& intent) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(intent);
  }
  cv_.notify_one();
}

void WebhookDriver::run() {
  for (;;) {
    Intent in;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      in = std::move(queue_.front());
      queue_.pop_front();
    }
    const std::string url = in.payload.value("Url", "");
    const auto [base, path] = split_url(url);
    bool ok = false;
    std::string error;
    try {
      httplib::Client client(base);
      client.set_socket_options([](int socket) { ::fcntl(socket, F_SETFD, FD_CLOEXEC); });
      const auto secs = std::chrono::duration_cast<std::chrono::seconds>(timeout_).count();
      client.set_connection_timeout(secs, 0);
      client.set_read_timeout(secs, 0);
      client.set_write_timeout(secs, 0);
      httplib::Headers headers = {{"X-Gpufleet-Alert", in.payload.value("AlertId", "")},
                                  {"X-Gpufleet-Alert-State", in.payload.value("State", "")}};
      auto res = client.Post(path, headers, in.payload.at("Body").dump(), "application/json");
      if (!res) {
        error = httplib::to_string(res.error());
      } else if (res->status < 200 || res->status >= 300) {
        error = fmt::format("HTTP {}", res->status);
      } else {
        ok = true;
      }
    } catch (const std::exception& e) {
      error = e.what();
    }
    if (!ok)
      spdlog::warn("webhook {}: alert {} not delivered: {}", url, in.payload.value("AlertId", ""),
                   error);
    report_(in.payload.value("AlertId", ""), in.payload.value("Target", ""),
            in.payload.value("State", ""), ok, error);
  }
}

}  // namespace gf
