// A real `gpufleet serve` on a free port, and the real CLI pointed at it. The constructor returns
// once the server has printed its address (its start is then acknowledged), so no test sleeps.
#pragma once

#include <gtest/gtest.h>
#include <httplib.h>

#include <algorithm>
#include <memory>
#include <regex>
#include <string>
#include <vector>

#include "core/json.h"
#include "support/process.h"

namespace gf::testing {

// The users' example inputs beside the tests (examples/), with a trailing slash.
inline const std::string kExamplesDir = std::string(GPUFLEET_EXAMPLES_DIR) + "/";

// A command's output as JSON (`-o json`); a test failure and {} when it is not JSON.
inline Json parse_out(const CommandResult& r) {
  auto j = parse_json(r.out);
  EXPECT_TRUE(j.ok()) << r.out;
  return j.ok() ? *j : Json::object();
}

class GpufleetServer {
 public:
  explicit GpufleetServer(const std::string& data_dir, std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {GPUFLEET_BINARY, "serve", "--data-dir", data_dir};
    // A free port unless `extra` names one (a restart on the same address).
    if (std::find(extra.begin(), extra.end(), "--listen") == extra.end())
      args.insert(args.end(), {"--listen", "127.0.0.1:0"});
    args.insert(args.end(), extra.begin(), extra.end());
    proc_ = std::make_unique<Process>(args);
    const std::string line = proc_->wait_for_line("serving on http");
    std::smatch m;
    if (std::regex_search(line, m, std::regex(R"((https?)://127\.0\.0\.1:(\d+))"))) {
      url_ = m[1].str() + "://127.0.0.1:" + m[2].str();
      port_ = std::stoi(m[2].str());
    }
  }

  // The CLI and get() send this bearer token (and trust this CA for https).
  void set_token(std::string token) { token_ = std::move(token); }
  void set_ca_cert(std::string path) { ca_cert_ = std::move(path); }
  int port() const { return port_; }

  // Runs `gpufleet --server URL ARGS…` to completion (stdout and stderr together).
  CommandResult cli(std::vector<std::string> args) const {
    std::vector<std::string> full = {GPUFLEET_BINARY, "--server", url_};
    if (!token_.empty()) full.insert(full.end(), {"--token", token_});
    if (!ca_cert_.empty()) full.insert(full.end(), {"--ca-cert", ca_cert_});
    full.insert(full.end(), args.begin(), args.end());
    return run_command(full);
  }
  // The same with another token.
  CommandResult cli_as(const std::string& token, std::vector<std::string> args) const {
    std::vector<std::string> full = {GPUFLEET_BINARY, "--server", url_, "--token", token};
    if (!ca_cert_.empty()) full.insert(full.end(), {"--ca-cert", ca_cert_});
    full.insert(full.end(), args.begin(), args.end());
    return run_command(full);
  }

  // GET path → parsed JSON body (null when unreachable or not JSON).
  Json get(const std::string& path) const {
    httplib::Client c(url_);
    if (!ca_cert_.empty()) c.set_ca_cert_path(ca_cert_.c_str());
    httplib::Headers h;
    if (!token_.empty()) h.emplace("Authorization", "Bearer " + token_);
    auto r = c.Get(path, h);
    return r ? Json::parse(r->body, nullptr, false) : Json();
  }
  // GET path with `token`: the HTTP status (0 when unreachable).
  int get_status_as(const std::string& token, const std::string& path) const {
    httplib::Client c(url_);
    if (!ca_cert_.empty()) c.set_ca_cert_path(ca_cert_.c_str());
    auto r = c.Get(path, httplib::Headers{{"Authorization", "Bearer " + token}});
    return r ? r->status : 0;
  }
  // Polls a read until `pred` holds; each poll is a blocking HTTP round trip (no sleeping). Tests
  // run the server sped up (--sim-speed), so conditions minutes apart arrive in well under a
  // second; the bound keeps a broken server from hanging the suite.
  template <typename Pred>
  Json poll(const std::string& path, Pred pred, int max_polls = 400000) const {
    Json j;
    for (int i = 0; i < max_polls; ++i) {
      j = get(path);
      if (pred(j)) return j;
    }
    ADD_FAILURE() << "condition never held for " << path << ": " << j.dump();
    return j;
  }

  // "" when the server did not come up (its output says why).
  const std::string& url() const { return url_; }
  Process& process() { return *proc_; }

 private:
  std::unique_ptr<Process> proc_;
  std::string url_;
  int port_ = 0;
  std::string token_;
  std::string ca_cert_;
};

}  // namespace gf::testing
