// Storage faults degrade, never kill (docs/operations.md "A full disk"): a real `serve` whose data
// directory is a tmpfs of a few MB, filled until the journal cannot append. Writes are refused
// with a 503 naming the cause, reads and /healthz (503 with the reason) go on, and once space is
// freed writes resume by themselves; every acknowledged write is there and no refused one is,
// also after a kill -9. The tmpfs needs root: without it the test is skipped with a message.
#include <gtest/gtest.h>
#include <httplib.h>
#include <sys/mount.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>

#include "support/eventually.h"
#include "support/gpufleet_server.h"
#include "support/temp_dir.h"

namespace gf {
namespace {

namespace fs = std::filesystem;
using testing::eventually;
using testing::GpufleetServer;
using testing::TempDir;

// A tmpfs of `mb` MB at `dir`, unmounted when it goes away.
class Tmpfs {
 public:
  Tmpfs(const std::string& dir, int mb) : dir_(dir) {
    fs::create_directories(dir);
    const std::string opts = "size=" + std::to_string(mb) + "m,mode=0700";
    mounted_ = ::mount("tmpfs", dir.c_str(), "tmpfs", 0, opts.c_str()) == 0;
    if (!mounted_) error_ = std::strerror(errno);
  }
  ~Tmpfs() {
    if (mounted_) ::umount2(dir_.c_str(), MNT_DETACH);
  }
  bool mounted() const { return mounted_; }
  const std::string& error() const { return error_; }

 private:
  std::string dir_;
  bool mounted_ = false;
  std::string error_;
};

// Writes zeros to `path` until the file system is full.
void fill(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  static const std::string block(64 * 1024, '\0');
  while (std::fwrite(block.data(), 1, block.size(), f) == block.size()) {
  }
  std::fclose(f);
}

std::string cluster_body(const std::string& name) {
  return R"({"ClusterName":")" + name +
         R"(","NodeProvisioningMode":"Continuous","InstanceGroups":[{"InstanceGroupName":"w",)"
         R"("InstanceType":"ml.g5.xlarge","InstanceCount":1}]})";
}

class StorageFaults : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "mounting a tmpfs needs root; storage faults not tested";
    tmpfs_ = std::make_unique<Tmpfs>(dir_.file("data"), 6);
    if (!tmpfs_->mounted()) GTEST_SKIP() << "cannot mount a tmpfs here: " << tmpfs_->error();
    start();
  }
  void start() {
    server_ = std::make_unique<GpufleetServer>(dir_.file("data"));
    ASSERT_FALSE(server_->url().empty()) << server_->process().output();
  }
  // POST /v1/clusters: the HTTP status and the body (0 when unreachable).
  std::pair<int, std::string> create(const std::string& name) {
    httplib::Client c(server_->url());
    auto r = c.Post("/v1/clusters", cluster_body(name), "application/json");
    return r ? std::pair{r->status, r->body} : std::pair{0, std::string()};
  }
  std::pair<int, std::string> healthz() {
    httplib::Client c(server_->url());
    auto r = c.Get("/healthz");
    return r ? std::pair{r->status, r->body} : std::pair{0, std::string()};
  }
  std::set<std::string> cluster_names() {
    std::set<std::string> out;
    for (const Json& c : server_->get("/v1/clusters").value("ClusterSummaries", Json::array()))
      out.insert(c.value("ClusterName", ""));
    return out;
  }

  TempDir dir_;
  std::unique_ptr<Tmpfs> tmpfs_;
  std::unique_ptr<GpufleetServer> server_;
};

TEST_F(StorageFaults, FullDiskPausesWritesKeepsReadsAndResumesByItselfWhenSpaceReturns) {
  std::set<std::string> acknowledged, refused;
  for (int i = 0; i < 5; ++i) {
    const std::string name = "before-" + std::to_string(i);
    ASSERT_EQ(create(name).first, 200);
    acknowledged.insert(name);
  }
  const std::string filler = dir_.file("data/filler");
  fill(filler);

  // Writes until one is refused (the first may still fit in a page SQLite holds free).
  std::string refusal;
  for (int i = 0; i < 500 && refusal.empty(); ++i) {
    const std::string name = "full-" + std::to_string(i);
    auto [status, body] = create(name);
    ASSERT_NE(status, 0) << "the server died on a full disk";
    if (status == 200) {
      acknowledged.insert(name);
    } else {
      EXPECT_EQ(status, 503) << body;
      refused.insert(name);
      refusal = body;
    }
  }
  ASSERT_FALSE(refusal.empty()) << "no write was refused on a full disk";
  EXPECT_NE(refusal.find("full"), std::string::npos) << refusal;
  EXPECT_NE(refusal.find("writes are paused"), std::string::npos) << refusal;
  // Reads go on from the last journaled state; /healthz says why writes are paused.
  EXPECT_EQ(cluster_names(), acknowledged);
  auto [health, reason] = healthz();
  EXPECT_EQ(health, 503);
  EXPECT_NE(reason.find("writes paused"), std::string::npos) << reason;
  // Writes stay refused while the disk is full (the retries find it full too).
  for (int i = 0; i < 3; ++i) {
    const std::string name = "still-full-" + std::to_string(i);
    auto [status, body] = create(name);
    EXPECT_EQ(status, 503) << body;
    if (status == 200)
      acknowledged.insert(name);
    else
      refused.insert(name);
  }

  fs::remove(filler);
  std::string resumed;
  EXPECT_TRUE(eventually(
      [&] {
        const std::string name = "after-" + std::to_string(acknowledged.size() + refused.size());
        auto [status, body] = create(name);
        (status == 200 ? acknowledged : refused).insert(name);
        return status == 200;
      },
      std::chrono::seconds(90)))
      << "writes did not resume after the space came back";
  EXPECT_EQ(healthz().first, 200);
  const std::set<std::string> names = cluster_names();
  for (const std::string& a : acknowledged) EXPECT_TRUE(names.contains(a)) << a << " was lost";
  for (const std::string& r : refused) EXPECT_FALSE(names.contains(r)) << r << " was invented";

  // The journal holds exactly that across a kill -9.
  server_->process().signal(SIGKILL);
  server_->process().wait();
  start();
  EXPECT_EQ(cluster_names(), names);
}

}  // namespace
}  // namespace gf
