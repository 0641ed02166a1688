// GET /v1/watch against a real `gpufleet serve` (docs/api.md "Watching"): a live watcher sees a
// cluster come up, a reconnect resumes after its Last-Event-ID, bad parameters are refused with
// the field named, and two hundred open watchers leave the API answering and all see the change.
// Suite ServeIntegration: it runs under ASan+UBSan in `make test` as well.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/json.h"
#include "support/gpufleet_server.h"
#include "support/temp_dir.h"

namespace gf {
namespace {

using testing::TempDir;
using Server = testing::GpufleetServer;

const char* kCluster =
    R"({"ClusterName":"training","NodeProvisioningMode":"Continuous","InstanceGroups":)"
    R"([{"InstanceGroupName":"g5","InstanceType":"ml.g5.xlarge","InstanceCount":2}]})";

// Reads a watch until `until` appears in what came (or `limit` seconds of the client's read
// timeout pass); returns what came. `opened` runs once the stream's first piece is in.
std::string read_watch(const Server& s, const std::string& path, const std::string& until,
                       httplib::Headers headers = {}, const std::function<void()>& opened = {},
                       int limit = 30) {
  httplib::Client c(s.url());
  c.set_read_timeout(limit, 0);
  std::string got;
  bool told = false;
  c.Get(path, headers, [&](const char* data, size_t n) {
    got.append(data, n);
    if (!told && opened && got.find("event: watching") != std::string::npos) {
      told = true;
      opened();
    }
    return got.find(until) == std::string::npos;
  });
  if (!told && opened) opened();  // never opened: let the test go on and fail on what came
  return got;
}

std::string write_cluster_file(const TempDir& dir) {
  const std::string path = dir.path() + "/c.json";
  std::ofstream(path) << kCluster;
  return path;
}

TEST(ServeIntegration, Watch_ALiveWatcherSeesTheClusterComeUpAndAReconnectResumesAfterItsLastId) {
  TempDir dir;
  Server s(dir.path() + "/data", {"--sim-speed", "600"});
  ASSERT_FALSE(s.url().empty());
  std::string live;
  std::mutex mu;
  std::condition_variable cv;
  bool open = false;
  std::thread watcher([&] {
    live = read_watch(s, "/v1/watch?kinds=Cluster", "every instance group", {}, [&] {
      std::lock_guard lock(mu);
      open = true;
      cv.notify_all();
    });
  });
  // The cluster is created once the watcher is in (its first piece came): it is news to it.
  {
    std::unique_lock lock(mu);
    EXPECT_TRUE(cv.wait_for(lock, std::chrono::seconds(30), [&] { return open; }));
  }
  const auto created_rc = s.cli({"cluster", "create", "-f", write_cluster_file(dir)}).exit_code;
  watcher.join();
  ASSERT_EQ(created_rc, 0);
  EXPECT_NE(live.find("event: watching"), std::string::npos) << live;
  EXPECT_NE(live.find("creation started"), std::string::npos) << live;
  EXPECT_NE(live.find("is InService"), std::string::npos) << live;
  EXPECT_EQ(live.find("event: InstanceGroup"), std::string::npos) << "kinds=Cluster only";

  // The id of the creation event: a reconnect with it as Last-Event-ID starts after it.
  const size_t created = live.find("creation started");
  const size_t id_at = live.rfind("id: ", created);
  const std::string id = live.substr(id_at + 4, live.find('\n', id_at) - id_at - 4);
  const std::string again =
      read_watch(s, "/v1/watch?kinds=Cluster", "is InService", {{"Last-Event-ID", id}});
  EXPECT_EQ(again.find("creation started"), std::string::npos) << again;
  EXPECT_NE(again.find("is InService"), std::string::npos) << again;
  EXPECT_NE(again.find("\"sinceSeq\":" + id), std::string::npos) << again;
}

TEST(ServeIntegration, Watch_BadParametersAreRefusedWithTheFieldNamed) {
  TempDir dir;
  Server s(dir.path() + "/data");
  ASSERT_FALSE(s.url().empty());
  httplib::Client c(s.url());
  for (const auto& [path, field] : std::vector<std::pair<std::string, std::string>>{
           {"/v1/watch?kinds=Pods", "kinds"},
           {"/v1/watch?kinds=Job,", "kinds"},
           {"/v1/watch?sinceSeq=-3", "sinceSeq"},
           {"/v1/watch?sinceSeq=99999999999999999999999", "sinceSeq"}}) {
    auto r = c.Get(path);
    ASSERT_TRUE(r) << path;
    EXPECT_EQ(r->status, 400) << path;
    EXPECT_NE(r->body.find(field), std::string::npos) << r->body;
    EXPECT_NE(r->body.find("ValidationException"), std::string::npos) << r->body;
  }
  auto r = c.Get("/v1/watch", {{"Last-Event-ID", "abc"}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);
  EXPECT_NE(r->body.find("Last-Event-ID"), std::string::npos) << r->body;
  auto post = c.Post("/v1/watch", "", "application/json");
  ASSERT_TRUE(post);
  EXPECT_GE(post->status, 400);
  EXPECT_LT(post->status, 500);
}

// A raw connection with a watch request sent; -1 when it could not connect.
int open_watch(int port, const std::string& version = "HTTP/1.1") {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  const std::string req = "GET /v1/watch?kinds=Cluster " + version + "\r\nHost: x\r\n\r\n";
  if (::send(fd, req.data(), req.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(req.size())) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// Reads what is there on each connection until every one has shown `text` or the bound passes.
std::vector<std::string> read_until_all(const std::vector<int>& fds, const std::string& text,
                                        std::chrono::seconds bound) {
  std::vector<std::string> got(fds.size());
  const auto end = std::chrono::steady_clock::now() + bound;
  while (std::chrono::steady_clock::now() < end) {
    std::vector<pollfd> pfds;
    for (int fd : fds) pfds.push_back(pollfd{fd, POLLIN, 0});
    if (::poll(pfds.data(), pfds.size(), 1000) < 0) break;
    bool all = true;
    for (size_t i = 0; i < fds.size(); ++i) {
      if (pfds[i].revents & POLLIN) {
        char buf[8192];
        const ssize_t n = ::recv(fds[i], buf, sizeof buf, 0);
        if (n > 0) got[i].append(buf, static_cast<size_t>(n));
      }
      all = all && got[i].find(text) != std::string::npos;
    }
    if (all) break;
  }
  return got;
}

TEST(ServeIntegration, Watch_TwoHundredOpenWatchersLeaveTheApiAnsweringAndAllSeeTheChange) {
  TempDir dir;
  Server s(dir.path() + "/data", {"--sim-speed", "600"});
  ASSERT_FALSE(s.url().empty());
  std::vector<int> fds;
  for (int i = 0; i < 200; ++i) {
    const int fd = open_watch(s.port());
    ASSERT_GE(fd, 0) << "watcher " << i;
    fds.push_back(fd);
  }
  // Every watcher has its head and first piece before the change.
  auto heads = read_until_all(fds, "event: watching", std::chrono::seconds(60));
  for (size_t i = 0; i < heads.size(); ++i) {
    ASSERT_NE(heads[i].find("text/event-stream"), std::string::npos) << i << ": " << heads[i];
  }
  // The API answers while they are open (more than the server's 16 workers: none holds one).
  EXPECT_EQ(s.get("/v1/clusters")["ClusterSummaries"].size(), 0u);
  ASSERT_EQ(s.cli({"cluster", "create", "-f", write_cluster_file(dir)}).exit_code, 0);
  auto news = read_until_all(fds, "is InService", std::chrono::seconds(60));
  for (size_t i = 0; i < news.size(); ++i) {
    EXPECT_NE(news[i].find("is InService"), std::string::npos) << "watcher " << i;
  }
  for (int fd : fds) ::close(fd);
  auto health = httplib::Client(s.url()).Get("/healthz");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
}

// Watchers that all disconnect at once give their descriptors back at once, not at the next
// heartbeat (15 s): serve notices each close while its stream waits (docs/security.md
// "Connections"). Counted in serve's /proc/<pid>/fd, within 5 s.
TEST(ServeIntegration, Watch_ThreeHundredWatchersThatDisconnectAtOnceCloseTheirSocketsAtOnce) {
  TempDir dir;
  Server s(dir.path() + "/data");
  ASSERT_FALSE(s.url().empty());
  const std::string fd_dir = "/proc/" + std::to_string(s.process().pid()) + "/fd";
  auto open_fds = [&] {
    size_t n = 0;
    for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(fd_dir)) ++n;
    return n;
  };
  const size_t before = open_fds();
  std::vector<int> fds;
  for (int i = 0; i < 300; ++i) {
    const int fd = open_watch(s.port());
    ASSERT_GE(fd, 0) << "watcher " << i;
    fds.push_back(fd);
  }
  read_until_all(fds, "event: watching", std::chrono::seconds(60));
  EXPECT_GE(open_fds(), before + 300);
  for (int fd : fds) ::close(fd);
  const auto bound = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  size_t now = open_fds();
  while (now > before + 10 && std::chrono::steady_clock::now() < bound) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    now = open_fds();
  }
  EXPECT_LE(now, before + 10) << "serve still holds " << now - before
                              << " descriptors 5 s after its watchers left";
}

// HTTP/1.0 has no chunked transfer: the events come raw, the body ending when the stream does.
TEST(ServeIntegration, Watch_AnHttp10ClientGetsTheEventsUnchunked) {
  TempDir dir;
  Server s(dir.path() + "/data");
  ASSERT_FALSE(s.url().empty());
  const int fd = open_watch(s.port(), "HTTP/1.0");
  ASSERT_GE(fd, 0);
  const auto got = read_until_all({fd}, "event: watching", std::chrono::seconds(30));
  ::close(fd);
  EXPECT_NE(got[0].find("HTTP/1.0 200"), std::string::npos) << got[0];
  EXPECT_EQ(got[0].find("chunked"), std::string::npos) << got[0];
  EXPECT_NE(got[0].find("\r\n\r\nretry: 2000\nevent: watching\n"), std::string::npos) << got[0];
}

}  // namespace
}  // namespace gf
