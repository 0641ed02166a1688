// A damaged journal is refused, naming where (docs/operations.md "A damaged journal"): a real
// `serve` writes a journal, stops, and the file is damaged as a disk would damage it — 16 bytes
// flipped inside an event, or a whole 4 KiB page zeroed — where an event of the first part of
// the history lies, below the latest snapshot (the part a restart never replays). `gpufleet journal
// verify` finds it and exits 1, and `serve` refuses to start with the same sentence instead of
// serving a history it cannot trust.
#include <gtest/gtest.h>
#include <httplib.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "support/gpufleet_server.h"
#include "support/temp_dir.h"

namespace gf {
namespace {

namespace fs = std::filesystem;
using testing::CommandResult;
using testing::GpufleetServer;
using testing::run_command;
using testing::TempDir;

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class JournalDamage : public ::testing::Test {
 protected:
  void SetUp() override {
    GpufleetServer server(data(), {"--snapshot-every", "40", "--no-fsync"});
    ASSERT_FALSE(server.url().empty()) << server.process().output();
    httplib::Client c(server.url());
    for (int i = 0; i < 60; ++i) {
      char name[32];
      std::snprintf(name, sizeof name, "target-%04d", i);
      const std::string body = std::string(R"({"ClusterName":")") + name +
                               R"(","InstanceGroups":[{"InstanceGroupName":"w",)"
                               R"("InstanceType":"ml.g5.xlarge","InstanceCount":1}]})";
      auto r = c.Post("/v1/clusters", body, "application/json");
      ASSERT_TRUE(r && r->status == 200) << (r ? r->body : "no answer");
    }
    server.process().signal(SIGTERM);  // a graceful stop: a last snapshot, the WAL folded in
    ASSERT_EQ(server.process().wait(), 0);
    ASSERT_EQ(verify().exit_code, 0) << verify().out;
  }

  std::string data() const { return dir_.file("data"); }
  std::string journal() const { return data() + "/journal.db"; }
  CommandResult verify() const {
    return run_command({GPUFLEET_BINARY, "journal", "verify", data()});
  }

  // Every place the cluster made about a fifth of the way in is written in the file: its
  // creation event, and the snapshots (old ones may sit in free pages) that hold it.
  std::vector<size_t> target_offsets() const {
    const std::string file = slurp(journal());
    std::vector<size_t> out;
    for (size_t at = file.find(kTarget); at != std::string::npos; at = file.find(kTarget, at + 1))
      out.push_back(at);
    EXPECT_FALSE(out.empty());
    return out;
  }
  static constexpr const char* kTarget = "\"ClusterName\":\"target-0012\"";
  void overwrite(size_t offset, const std::string& bytes) const {
    std::fstream f(journal(), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(offset));
    f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  // `serve` on the damaged journal: it must exit without serving, saying why (bounded: a serve
  // that did start is stopped after 20 s and fails the test).
  void expect_serve_refuses(const std::string& needle) const {
    const CommandResult r = run_command({"/usr/bin/timeout", "20", GPUFLEET_BINARY, "serve",
                                         "--data-dir", data(), "--listen", "127.0.0.1:0"});
    EXPECT_EQ(r.exit_code, 1) << r.out;
    EXPECT_EQ(r.out.find("serving on"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("is damaged"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(needle), std::string::npos) << r.out;
  }

  TempDir dir_;
};

TEST_F(JournalDamage, SixteenFlippedBytesInAnEventAreFoundByVerifyAndRefusedAtStart) {
  const std::string file = slurp(journal());
  for (const size_t at : target_offsets()) {
    std::string flipped = file.substr(at, 16);
    for (char& c : flipped) c = static_cast<char>(c ^ 0x20);
    overwrite(at, flipped);
  }
  const CommandResult r = verify();
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("does not match the checksum written with it"), std::string::npos) << r.out;
  expect_serve_refuses("does not match the checksum");
}

TEST_F(JournalDamage, AZeroedPageIsFoundByVerifyAndRefusedAtStart) {
  for (const size_t at : target_offsets()) overwrite(at / 4096 * 4096, std::string(4096, '\0'));
  const CommandResult r = verify();
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("is damaged"), std::string::npos) << r.out;
  expect_serve_refuses("is damaged");
}

}  // namespace
}  // namespace gf
