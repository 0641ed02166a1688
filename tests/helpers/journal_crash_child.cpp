// journal_crash_child DBPATH [SEED]
//
// The writer half of the journal crash test (tests/unit/journal/journal_crash_test.cpp): appends
// batches to the SQLite journal at DBPATH as fast as it can, forever, until it is SIGKILLed.
// After each append returns OK it writes the batch's last seq as one line to stdout and flushes,
// so every line the parent reads is an acknowledged, durable batch.
//
// Batch layout (journal_crash_event.h, shared with the test, which recomputes every event):
// batch B is the seq its first event gets, i.e. last_seq + 1 before the append; it has N fresh
// events (N in 1..50), event I (0-based) lands at seq B + I with the type, payload, key and time
// crash_event(B, I, N) gives. Some batches also carry one re-sent event whose key is
// already journaled (earlier batch, earlier run, or earlier in the same batch); it must come back
// duplicate=true with the original seq and is never stored.
//
// Exit codes: 0 never (it runs until killed), 2 usage, 3 journal error, 4 contract violation.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "helpers/journal_crash_event.h"
#include "journal/sqlite/sqlite_journal.h"

namespace {

using gf::Seq;

// Writes the whole line to fd 1 (no stdio buffering: once write returns, the bytes are in the
// pipe and survive SIGKILL).
bool write_line(const std::string& line) {
  size_t done = 0;
  while (done < line.size()) {
    const ssize_t n = ::write(STDOUT_FILENO, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

[[noreturn]] void fail(int code, const std::string& message) {
  std::fprintf(stderr, "journal_crash_child: %s\n", message.c_str());
  std::fflush(stderr);
  std::_Exit(code);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    std::fprintf(stderr, "usage: journal_crash_child DBPATH [SEED]\n");
    return 2;
  }
  const uint32_t seed = argc == 3 ? static_cast<uint32_t>(std::strtoul(argv[2], nullptr, 10)) : 1;
  std::mt19937 rng(seed);

  auto opened = gf::SqliteJournal::open(argv[1]);
  if (!opened.ok()) fail(3, "open: " + opened.status().to_string());
  std::unique_ptr<gf::SqliteJournal> journal = std::move(opened).value();

  // Keys this process knows to be journaled, with their seqs; seeded from the journal's tail so
  // re-sent keys also cover events written by an earlier (killed) run.
  std::vector<std::pair<std::string, Seq>> known_keys;
  const Seq start = *journal->last_seq();
  gf::Status scanned =
      journal->replay(start > 200 ? start - 200 : 0, [&](const gf::EventRecord& r) {
        if (!r.idempotency_key.empty()) known_keys.emplace_back(r.idempotency_key, r.seq);
        return gf::ok_status();
      });
  if (!scanned.ok()) fail(3, "replay tail: " + scanned.to_string());

  std::vector<gf::NewEvent> batch;
  std::vector<int> fresh_index;  // Per position in batch: event index I, or -1 for the re-sent one.
  for (;;) {
    const Seq first = *journal->last_seq() + 1;
    const int size = std::uniform_int_distribution<int>(1, 50)(rng);
    batch.clear();
    fresh_index.clear();
    for (int i = 0; i < size; ++i) {
      batch.push_back(gf::crash_test::crash_event(first, i, size));
      fresh_index.push_back(i);
    }
    // One batch in three re-sends a known key at a random position.
    std::optional<Seq> resent_seq;
    if (std::uniform_int_distribution<int>(0, 2)(rng) == 0) {
      std::string key;
      const size_t pos = std::uniform_int_distribution<size_t>(0, batch.size())(rng);
      if (!known_keys.empty() && std::uniform_int_distribution<int>(0, 1)(rng) == 0) {
        const auto& [k, s] =
            known_keys[std::uniform_int_distribution<size_t>(0, known_keys.size() - 1)(rng)];
        key = k;
        resent_seq = s;
      } else {
        // The earliest keyed event of this batch placed before pos, if there is one.
        for (size_t p = 0; p < pos; ++p) {
          if (!batch[p].idempotency_key.empty()) {
            key = batch[p].idempotency_key;
            resent_seq = first + fresh_index[p];
            break;
          }
        }
      }
      if (resent_seq) {
        batch.insert(batch.begin() + static_cast<std::ptrdiff_t>(pos),
                     gf::NewEvent{"crash.resent", "{\"resent\":true}", key, gf::Time{}});
        fresh_index.insert(fresh_index.begin() + static_cast<std::ptrdiff_t>(pos), -1);
      }
    }

    auto result = journal->append(batch);
    if (!result.ok()) fail(3, "append: " + result.status().to_string());
    for (size_t p = 0; p < batch.size(); ++p) {
      const bool dup = result->duplicate[p];
      const Seq seq = result->seqs[p];
      const Seq want = fresh_index[p] < 0 ? *resent_seq : first + fresh_index[p];
      if (dup != (fresh_index[p] < 0) || seq != want) {
        fail(4, "batch " + std::to_string(first) + " position " + std::to_string(p) + ": got seq " +
                    std::to_string(seq) + (dup ? " (duplicate)" : "") + ", want " +
                    std::to_string(want));
      }
      if (!dup && !batch[p].idempotency_key.empty()) {
        known_keys.emplace_back(batch[p].idempotency_key, seq);
      }
    }
    if (known_keys.size() > 1000) known_keys.erase(known_keys.begin(), known_keys.begin() + 500);
    const Seq last = first + size - 1;
    if (*journal->last_seq() != last) {
      fail(4, "last_seq " + std::to_string(*journal->last_seq()) + " after batch ending at " +
                  std::to_string(last));
    }
    if (!write_line(std::to_string(last) + "\n")) fail(3, "write ack: broken pipe");
  }
}
