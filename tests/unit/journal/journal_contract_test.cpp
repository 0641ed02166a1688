// The journal contract suite (see journal_contract.h). Each implementation instantiates it in its
// own test file; this file only defines the tests, so it is compiled once per test binary.
#include "unit/journal/journal_contract.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace gf::journal_contract {
namespace {

using ::testing::ElementsAre;

std::vector<Seq> seqs_of(const std::vector<EventRecord>& records) {
  std::vector<Seq> seqs;
  for (const EventRecord& r : records) seqs.push_back(r.seq);
  return seqs;
}

std::vector<Seq> iota_seqs(Seq first, Seq last) {
  std::vector<Seq> seqs;
  for (Seq s = first; s <= last; ++s) seqs.push_back(s);
  return seqs;
}

void expect_same_event(const EventRecord& got, const NewEvent& want, Seq seq) {
  EXPECT_EQ(got.seq, seq);
  EXPECT_EQ(got.type, want.type) << "seq " << seq;
  EXPECT_EQ(got.payload, want.payload) << "seq " << seq;
  EXPECT_EQ(got.idempotency_key, want.idempotency_key) << "seq " << seq;
  EXPECT_EQ(to_micros(got.time), to_micros(want.time)) << "seq " << seq;
}

// Ten distinct events: keys on every third, times one millisecond apart.
std::vector<NewEvent> ten_events() {
  std::vector<NewEvent> events;
  for (int i = 0; i < 10; ++i) {
    events.push_back(
        make_event("test.event" + std::to_string(i % 3), R"({"i":)" + std::to_string(i) + "}",
                   i % 3 == 0 ? "key-" + std::to_string(i) : "", kSimEpoch + Duration(1000 * i)));
  }
  return events;
}

TEST_P(JournalContractTest, EmptyJournalHasLastSeqZeroAndReplaysNothing) {
  EXPECT_EQ(last_seq(), 0);
  EXPECT_TRUE(replay_all().empty());
  EXPECT_EQ(find_key("anything"), std::nullopt);
}

TEST_P(JournalContractTest, AppendAssignsGaplessSeqsStartingAtOne) {
  AppendResult first = append({make_event("a", "1")});
  EXPECT_THAT(first.seqs, ElementsAre(1));
  EXPECT_THAT(first.duplicate, ElementsAre(false));

  AppendResult second = append({make_event("b", "2"), make_event("c", "3"), make_event("d", "4")});
  EXPECT_THAT(second.seqs, ElementsAre(2, 3, 4));
  EXPECT_THAT(second.duplicate, ElementsAre(false, false, false));
  EXPECT_EQ(last_seq(), 4);
  EXPECT_EQ(seqs_of(replay_all()), iota_seqs(1, 4));
}

TEST_P(JournalContractTest, LastSeqEqualsReplayedCountAfterManyRandomBatches) {
  std::mt19937 rng(42);
  Seq expected_next = 1;
  for (int b = 0; b < 40; ++b) {
    std::vector<NewEvent> batch(std::uniform_int_distribution<int>(1, 30)(rng),
                                make_event("t", "p"));
    AppendResult result = append(batch);
    ASSERT_EQ(result.seqs.size(), batch.size());
    for (Seq seq : result.seqs) EXPECT_EQ(seq, expected_next++);
  }
  EXPECT_EQ(last_seq(), expected_next - 1);
  EXPECT_EQ(seqs_of(replay_all()), iota_seqs(1, expected_next - 1));
}

TEST_P(JournalContractTest, EmptyBatchIsOkAndWritesNothing) {
  AppendResult empty = append({});
  EXPECT_TRUE(empty.seqs.empty());
  EXPECT_TRUE(empty.duplicate.empty());
  EXPECT_EQ(last_seq(), 0);

  append({make_event("a", "1")});
  append({});
  EXPECT_EQ(last_seq(), 1);
  EXPECT_THAT(append({make_event("b", "2")}).seqs, ElementsAre(2));
}

TEST_P(JournalContractTest, BatchIsAtomicAndAppearsEntirelyAfterReopen) {
  std::vector<NewEvent> batch;
  for (int i = 0; i < 500; ++i) {
    batch.push_back(make_event("bulk", std::to_string(i), i % 10 == 0 ? std::to_string(i) : ""));
  }
  append({make_event("before", "x")});
  append(batch);
  ASSERT_NO_FATAL_FAILURE(reopen());
  EXPECT_EQ(last_seq(), 501);
  std::vector<EventRecord> records = replay_all(1);
  ASSERT_EQ(records.size(), batch.size());
  for (size_t i = 0; i < batch.size(); ++i) expect_same_event(records[i], batch[i], 2 + Seq(i));
}

TEST_P(JournalContractTest, ReplayFromZeroReturnsAllEventsInOrderWithIdenticalFields) {
  std::vector<NewEvent> events = ten_events();
  append(std::vector<NewEvent>(events.begin(), events.begin() + 4));
  append(std::vector<NewEvent>(events.begin() + 4, events.end()));
  std::vector<EventRecord> records = replay_all(0);
  ASSERT_EQ(records.size(), events.size());
  for (size_t i = 0; i < events.size(); ++i) expect_same_event(records[i], events[i], Seq(i) + 1);
}

TEST_P(JournalContractTest, ReplayFromTheMiddleReturnsExactlyTheLaterEvents) {
  std::vector<NewEvent> events = ten_events();
  append(events);
  for (Seq after = 0; after <= 10; ++after) {
    std::vector<EventRecord> records = replay_all(after);
    ASSERT_EQ(records.size(), size_t(10 - after)) << "after " << after;
    for (size_t i = 0; i < records.size(); ++i) {
      expect_same_event(records[i], events[after + i], after + Seq(i) + 1);
    }
  }
  EXPECT_TRUE(replay_all(11).empty());
  EXPECT_TRUE(replay_all(1000).empty());
}

TEST_P(JournalContractTest, PayloadTypeAndKeyAreBinarySafe) {
  std::string all_bytes;
  for (int c = 0; c < 256; ++c) all_bytes.push_back(static_cast<char>(c));
  const std::string with_nuls("a\0b\0\0c", 6);
  const std::string utf8 = "{\"name\":\"GPU-Flotte äöü 日本語 🚀\"}";
  const std::string big(1 << 20, '\xff');
  std::vector<NewEvent> events = {
      make_event("bytes", all_bytes),
      make_event("nul", with_nuls, "k\xc3\xa9y-\xe2\x9c\x93"),
      make_event("utf8.\xe6\x97\xa5", utf8, "utf8-key"),
      make_event("empty", ""),
      make_event("big", big),
  };
  append(events);
  for (int pass = 0; pass < 2; ++pass) {
    std::vector<EventRecord> records = replay_all();
    ASSERT_EQ(records.size(), events.size()) << "pass " << pass;
    for (size_t i = 0; i < events.size(); ++i) expect_same_event(records[i], events[i], Seq(i) + 1);
    EXPECT_EQ(find_key("k\xc3\xa9y-\xe2\x9c\x93"), 2);
    ASSERT_NO_FATAL_FAILURE(reopen());
  }
}

TEST_P(JournalContractTest, TimeRoundTripsAtMicrosecondResolution) {
  std::vector<NewEvent> events = {
      make_event("t", "epoch", "", Time{}),
      make_event("t", "sim", "", kSimEpoch + Duration(1)),
      make_event("t", "before-1970", "", Time{} - Duration(123456789)),
      make_event("t", "far", "", from_micros(int64_t{1} << 60)),
  };
  append(events);
  std::vector<EventRecord> records = replay_all();
  ASSERT_EQ(records.size(), events.size());
  for (size_t i = 0; i < events.size(); ++i) expect_same_event(records[i], events[i], Seq(i) + 1);
}

TEST_P(JournalContractTest, DuplicateKeyInALaterBatchReturnsOriginalSeqAndAddsNoEntry) {
  append({make_event("a", "1"), make_event("create", "original", "req-1")});
  AppendResult again = append({make_event("create", "retry", "req-1")});
  EXPECT_THAT(again.seqs, ElementsAre(2));
  EXPECT_THAT(again.duplicate, ElementsAre(true));
  EXPECT_EQ(last_seq(), 2);
  std::vector<EventRecord> records = replay_all();
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[1].payload, "original");  // The retry's payload is dropped, not merged.
}

TEST_P(JournalContractTest, DuplicateKeyWithinOneBatchReturnsTheFirstSeqAndAddsNoEntry) {
  append({make_event("x", "0")});
  AppendResult result =
      append({make_event("a", "1", "k"), make_event("b", "2"), make_event("a", "3", "k"),
              make_event("c", "4", "k2"), make_event("c", "5", "k2")});
  EXPECT_THAT(result.seqs, ElementsAre(2, 3, 2, 4, 4));
  EXPECT_THAT(result.duplicate, ElementsAre(false, false, true, false, true));
  EXPECT_EQ(last_seq(), 4);
  std::vector<EventRecord> records = replay_all(1);
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[0].payload, "1");
  EXPECT_EQ(records[1].payload, "2");
  EXPECT_EQ(records[2].payload, "4");
}

TEST_P(JournalContractTest, DuplicatesDoNotConsumeSeqsSoSeqsStayGapless) {
  append({make_event("a", "1", "k1")});
  AppendResult result =
      append({make_event("b", "2"), make_event("a", "1", "k1"), make_event("c", "3")});
  EXPECT_THAT(result.seqs, ElementsAre(2, 1, 3));
  EXPECT_THAT(result.duplicate, ElementsAre(false, true, false));
  EXPECT_EQ(seqs_of(replay_all()), iota_seqs(1, 3));
}

TEST_P(JournalContractTest, AllDuplicateBatchLeavesLastSeqUnchanged) {
  append({make_event("a", "1", "k1"), make_event("b", "2", "k2")});
  AppendResult result = append({make_event("b", "2", "k2"), make_event("a", "1", "k1")});
  EXPECT_THAT(result.seqs, ElementsAre(2, 1));
  EXPECT_THAT(result.duplicate, ElementsAre(true, true));
  EXPECT_EQ(last_seq(), 2);
  EXPECT_THAT(append({make_event("c", "3")}).seqs, ElementsAre(3));
}

TEST_P(JournalContractTest, EventsWithoutKeysNeverDedup) {
  const NewEvent same = make_event("same", "{}");
  AppendResult first = append({same, same, same});
  AppendResult second = append({same});
  EXPECT_THAT(first.seqs, ElementsAre(1, 2, 3));
  EXPECT_THAT(first.duplicate, ElementsAre(false, false, false));
  EXPECT_THAT(second.seqs, ElementsAre(4));
  EXPECT_THAT(second.duplicate, ElementsAre(false));
  EXPECT_EQ(replay_all().size(), 4u);
}

TEST_P(JournalContractTest, FindKeyReturnsTheSeqOfTheKeyedEventAndNothingForUnknownKeys) {
  append({make_event("a", "1"), make_event("b", "2", "kb"), make_event("c", "3", "kc")});
  EXPECT_EQ(find_key("kb"), 2);
  EXPECT_EQ(find_key("kc"), 3);
  EXPECT_EQ(find_key("kd"), std::nullopt);
  EXPECT_EQ(find_key(""), std::nullopt);    // "" means no key: never found.
  EXPECT_EQ(find_key("KB"), std::nullopt);  // Keys are compared exactly.
}

TEST_P(JournalContractTest, DedupSurvivesReopen) {
  append({make_event("a", "1", "k1"), make_event("b", "2")});
  ASSERT_NO_FATAL_FAILURE(reopen());
  EXPECT_EQ(find_key("k1"), 1);
  AppendResult result = append({make_event("a", "again", "k1"), make_event("c", "3", "k3")});
  EXPECT_THAT(result.seqs, ElementsAre(1, 3));
  EXPECT_THAT(result.duplicate, ElementsAre(true, false));
  EXPECT_EQ(last_seq(), 3);
}

TEST_P(JournalContractTest, LatestSnapshotIsEmptyAtFirst) {
  auto latest = journal().latest_snapshot();
  ASSERT_TRUE(latest.ok()) << latest.status().to_string();
  EXPECT_FALSE(latest->has_value());
}

TEST_P(JournalContractTest, SnapshotRoundTripsBinaryData) {
  append({make_event("a", "1"), make_event("b", "2")});
  const std::string data("state\0with\xff\xfe bytes \xe2\x9c\x93", 22);
  ASSERT_TRUE(journal().save_snapshot({2, data}).ok());
  auto latest = journal().latest_snapshot();
  ASSERT_TRUE(latest.ok()) << latest.status().to_string();
  ASSERT_TRUE(latest->has_value());
  EXPECT_EQ((*latest)->seq, 2);
  EXPECT_EQ((*latest)->data, data);
}

TEST_P(JournalContractTest, LatestSnapshotIsTheHighestSeqOfSeveral) {
  append(std::vector<NewEvent>(30, make_event("t", "p")));
  for (Seq seq : {5, 10, 20}) {
    ASSERT_TRUE(journal().save_snapshot({seq, "s" + std::to_string(seq)}).ok());
  }
  auto latest = journal().latest_snapshot();
  ASSERT_TRUE(latest.ok() && latest->has_value());
  EXPECT_EQ((*latest)->seq, 20);
  EXPECT_EQ((*latest)->data, "s20");
}

TEST_P(JournalContractTest, SnapshotPruningKeepsTheLatestTwo) {
  append(std::vector<NewEvent>(10, make_event("t", "p")));
  ASSERT_TRUE(journal().save_snapshot({1, "s1"}).ok());
  auto stored = store().stored_snapshot_seqs();
  ASSERT_TRUE(stored.ok()) << stored.status().to_string();
  EXPECT_THAT(*stored, ElementsAre(1));
  for (Seq seq = 2; seq <= 6; ++seq) {
    ASSERT_TRUE(journal().save_snapshot({seq, "s" + std::to_string(seq)}).ok());
    stored = store().stored_snapshot_seqs();
    ASSERT_TRUE(stored.ok()) << stored.status().to_string();
    EXPECT_THAT(*stored, ElementsAre(seq - 1, seq));
  }
  auto latest = journal().latest_snapshot();
  ASSERT_TRUE(latest.ok() && latest->has_value());
  EXPECT_EQ((*latest)->data, "s6");
}

TEST_P(JournalContractTest, ReopenPreservesEverythingAndContinuesSeqNumbering) {
  std::vector<NewEvent> events = ten_events();
  append(events);
  ASSERT_TRUE(journal().save_snapshot({7, "seven"}).ok());
  ASSERT_TRUE(journal().save_snapshot({9, "nine"}).ok());
  ASSERT_NO_FATAL_FAILURE(reopen());

  EXPECT_EQ(last_seq(), 10);
  std::vector<EventRecord> records = replay_all();
  ASSERT_EQ(records.size(), events.size());
  for (size_t i = 0; i < events.size(); ++i) expect_same_event(records[i], events[i], Seq(i) + 1);
  EXPECT_EQ(find_key("key-3"), 4);
  auto latest = journal().latest_snapshot();
  ASSERT_TRUE(latest.ok() && latest->has_value());
  EXPECT_EQ((*latest)->seq, 9);
  EXPECT_EQ((*latest)->data, "nine");
  auto stored = store().stored_snapshot_seqs();
  ASSERT_TRUE(stored.ok()) << stored.status().to_string();
  EXPECT_THAT(*stored, ElementsAre(7, 9));

  EXPECT_THAT(append({make_event("next", "11"), make_event("next", "12")}).seqs,
              ElementsAre(11, 12));
  ASSERT_NO_FATAL_FAILURE(reopen());
  EXPECT_EQ(last_seq(), 12);
  EXPECT_EQ(seqs_of(replay_all()), iota_seqs(1, 12));
}

TEST_P(JournalContractTest, ReplayCallbackErrorStopsReplayAndIsReturned) {
  append(ten_events());
  std::vector<Seq> seen;
  Status status = journal().replay(0, [&](const EventRecord& record) {
    seen.push_back(record.seq);
    if (record.seq == 3) return conflict_error("stop at 3");
    return ok_status();
  });
  EXPECT_EQ(status.code(), ErrorCode::kConflict);
  EXPECT_EQ(status.message(), "stop at 3");
  EXPECT_THAT(seen, ElementsAre(1, 2, 3));

  // The interrupted replay leaves the journal fully usable.
  EXPECT_EQ(seqs_of(replay_all(5)), iota_seqs(6, 10));
  EXPECT_THAT(append({make_event("after", "11")}).seqs, ElementsAre(11));
  EXPECT_EQ(last_seq(), 11);
}

}  // namespace
}  // namespace gf::journal_contract
