// Crash safety of the SQLite journal: a child process (tests/helpers/journal_crash_child.cpp)
// appends batches to one database file and acknowledges each on a pipe; the test SIGKILLs it at a
// pseudo-random point, reopens the file and checks that
//   * every acknowledged batch is present (acks are durable),
//   * seqs are gapless 1..last_seq,
//   * every batch is complete (a crash never leaves part of a batch),
//   * every event is intact (type, payload, key and time recomputed from its position) and in
//     order.
// Many rounds run on the same file, so later rounds also exercise recovery of earlier crashes.
// No sleeps: the kill is driven by the acks read, the seed makes the kill points reproducible.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <optional>
#include <random>
#include <string>
#include <unordered_set>
#include <vector>

#include "helpers/journal_crash_event.h"
#include "journal/sqlite/sqlite_journal.h"
#include "unit/journal/journal_contract.h"

namespace gf {
namespace {

constexpr const char* kChildPath = GPUFLEET_HELPER_DIR "/journal_crash_child";
constexpr int kRounds = 60;
constexpr int kMaxAcksPerRound = 30;
constexpr uint32_t kSeed = 20260101;

// Splits what arrives on a pipe into lines; next() returns nullopt at end of file.
class LineReader {
 public:
  explicit LineReader(int fd) : fd_(fd) {}

  std::optional<std::string> next() {
    for (;;) {
      if (size_t nl = buffer_.find('\n'); nl != std::string::npos) {
        std::string line = buffer_.substr(0, nl);
        buffer_.erase(0, nl + 1);
        return line;
      }
      char chunk[4096];
      const ssize_t n = ::read(fd_, chunk, sizeof(chunk));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return std::nullopt;  // A partial last line (none is expected) is dropped.
      buffer_.append(chunk, static_cast<size_t>(n));
    }
  }

 private:
  int fd_;
  std::string buffer_;
};

struct ChildRun {
  std::vector<Seq> acks;  // Every ack the child wrote, including those read after the kill.
  int wait_status = 0;
};

// Starts the child, reads `kill_after` acks (0: none), SIGKILLs it, then drains the pipe: a line
// that reached the pipe before the kill was acknowledged just the same.
::testing::AssertionResult run_child(const std::string& db_path, uint32_t seed, int kill_after,
                                     ChildRun& run) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return ::testing::AssertionFailure() << "pipe2 failed";
  std::string path = kChildPath;
  std::string db = db_path;
  std::string seed_arg = std::to_string(seed);
  char* argv[] = {path.data(), db.data(), seed_arg.data(), nullptr};

  const pid_t pid = ::fork();
  if (pid < 0) return ::testing::AssertionFailure() << "fork failed";
  if (pid == 0) {
    // Only async-signal-safe calls between fork and exec.
    if (::dup2(fds[1], STDOUT_FILENO) < 0) ::_exit(126);
    ::execv(argv[0], argv);
    ::_exit(127);
  }
  ::close(fds[1]);

  LineReader reader(fds[0]);
  while (static_cast<int>(run.acks.size()) < kill_after) {
    std::optional<std::string> line = reader.next();
    if (!line) break;  // The child died on its own; its wait status says why.
    run.acks.push_back(std::stoll(*line));
  }
  ::kill(pid, SIGKILL);
  while (std::optional<std::string> line = reader.next()) run.acks.push_back(std::stoll(*line));
  ::close(fds[0]);
  if (::waitpid(pid, &run.wait_status, 0) != pid) {
    return ::testing::AssertionFailure() << "waitpid failed";
  }
  if (!WIFSIGNALED(run.wait_status) || WTERMSIG(run.wait_status) != SIGKILL) {
    return ::testing::AssertionFailure()
           << "child did not die by our SIGKILL: wait status " << run.wait_status
           << (WIFEXITED(run.wait_status)
                   ? " (exit code " + std::to_string(WEXITSTATUS(run.wait_status)) + ")"
                   : "");
  }
  return ::testing::AssertionSuccess();
}

// Replays the whole journal and checks every invariant; returns the last seq and the seq of every
// batch's last event.
::testing::AssertionResult check_journal(const std::string& db_path, Seq& last,
                                         std::unordered_set<Seq>& batch_ends) {
  auto opened = SqliteJournal::open(db_path);
  if (!opened.ok()) return ::testing::AssertionFailure() << opened.status().to_string();
  SqliteJournal& journal = **opened;

  Seq expected_seq = 1;
  Seq batch = 0;
  int size = 0;
  int next_index = 0;  // Index the next event of the current batch must have.
  Status status = journal.replay(0, [&](const EventRecord& r) -> Status {
    const std::string where = "seq " + std::to_string(r.seq) + ": ";
    if (r.seq != expected_seq) {
      return internal_error(where + "gap, expected seq " + std::to_string(expected_seq));
    }
    Seq b = 0;
    int i = 0;
    int n = 0;
    if (!crash_test::parse_crash_payload(r.payload, b, i, n)) {
      return internal_error(where + "unparseable payload '" + r.payload + "'");
    }
    if (i == 0) {
      if (next_index != size) {
        return internal_error(where + "batch " + std::to_string(batch) + " is partial: " +
                              std::to_string(next_index) + " of " + std::to_string(size));
      }
      batch = b;
      size = n;
      next_index = 0;
    }
    if (b != batch || n != size || i != next_index || r.seq != b + i) {
      return internal_error(where + "out of place: batch " + std::to_string(b) + " index " +
                            std::to_string(i) + " size " + std::to_string(n) + " inside batch " +
                            std::to_string(batch));
    }
    const NewEvent want = crash_test::crash_event(b, i, n);
    if (r.type != want.type || r.payload != want.payload ||
        r.idempotency_key != want.idempotency_key || r.time != want.time) {
      return internal_error(where + "event differs from what was appended");
    }
    if (i == n - 1) batch_ends.insert(r.seq);
    ++next_index;
    ++expected_seq;
    return ok_status();
  });
  if (!status.ok()) return ::testing::AssertionFailure() << status.to_string();
  if (next_index != size) {
    return ::testing::AssertionFailure()
           << "last batch " << batch << " is partial: " << next_index << " of " << size;
  }
  last = *journal.last_seq();
  if (last != expected_seq - 1) {
    return ::testing::AssertionFailure()
           << "last_seq " << last << " but replay ended at " << expected_seq - 1;
  }
  return ::testing::AssertionSuccess();
}

TEST(JournalCrashTest, AcknowledgedBatchesSurviveSigkillAndNoBatchIsEverPartial) {
  journal_contract::TempDir dir("gf-journal-crash-");
  ASSERT_TRUE(dir.ok());
  const std::string db_path = dir.file("crash.db");
  std::mt19937 rng(kSeed);

  Seq last = 0;
  int total_acks = 0;
  int zero_ack_rounds = 0;
  for (int round = 0; round < kRounds; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    // Round 0 kills before the file even exists, round 1 right after the first ack.
    int kill_after = std::uniform_int_distribution<int>(1, kMaxAcksPerRound)(rng);
    if (round == 0 || std::uniform_int_distribution<int>(0, 5)(rng) == 0) kill_after = 0;
    if (round == 1) kill_after = 1;
    zero_ack_rounds += kill_after == 0 ? 1 : 0;

    ChildRun run;
    ASSERT_TRUE(run_child(db_path, kSeed + static_cast<uint32_t>(round), kill_after, run));
    ASSERT_GE(static_cast<int>(run.acks.size()), kill_after);
    total_acks += static_cast<int>(run.acks.size());

    const Seq before = last;
    std::unordered_set<Seq> batch_ends;
    ASSERT_TRUE(check_journal(db_path, last, batch_ends));
    ASSERT_GE(last, before);
    Seq previous_ack = before;
    for (Seq ack : run.acks) {
      EXPECT_GT(ack, previous_ack) << "acks must increase and follow the previous round";
      EXPECT_LE(ack, last) << "acknowledged seq " << ack << " is missing after the crash";
      EXPECT_TRUE(batch_ends.contains(ack)) << "ack " << ack << " is not the end of a batch";
      previous_ack = ack;
    }
  }
  EXPECT_GT(zero_ack_rounds, 1);
  EXPECT_GT(total_acks, kRounds) << "the child barely ran; the test checked little";
  std::printf("[ crash    ] %d rounds, %d acks, %lld events journaled\n", kRounds, total_acks,
              static_cast<long long>(last));
}

}  // namespace
}  // namespace gf
