// The journal contract: the behaviour every Journal implementation must show, as one
// value-parameterized gtest suite (the tests are in journal_contract_test.cpp).
//
// To run it against an implementation, write a JournalStore for it and instantiate the suite in
// that implementation's test file:
//
//   namespace gf::journal_contract {
//   class PostgresStore final : public JournalStore { … };
//   INSTANTIATE_TEST_SUITE_P(Postgres, JournalContractTest,
//       ::testing::Values(JournalContractParam{"Postgres", make_store<PostgresStore>}),
//       param_name);
//   }  // namespace gf::journal_contract
//
// Each test gets a fresh, empty store and may open it several times (one journal at a time) to
// check what survives a reopen.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "core/result.h"
#include "core/time.h"
#include "journal/journal.h"

namespace gf::journal_contract {

// Where one test's journal lives: a temp directory, a fresh database schema, …
// Destroying the store deletes whatever it created.
class JournalStore {
 public:
  virtual ~JournalStore() = default;
  // Opens a journal on this store. Called again after the previous journal was destroyed; the new
  // journal must see everything the old one acknowledged.
  virtual Result<std::unique_ptr<Journal>> open() = 0;
  // The seqs of the snapshots physically stored, ascending. The Journal interface only exposes
  // the latest, so this is how the suite checks pruning.
  virtual Result<std::vector<Seq>> stored_snapshot_seqs() = 0;
};

struct JournalContractParam {
  std::string name;  // gtest parameter name, e.g. "Sqlite"
  std::function<Result<std::unique_ptr<JournalStore>>()> make_store;
};

template <typename StoreT>
Result<std::unique_ptr<JournalStore>> make_store() {
  auto store = std::make_unique<StoreT>();
  return std::unique_ptr<JournalStore>(std::move(store));
}

inline std::string param_name(const ::testing::TestParamInfo<JournalContractParam>& info) {
  return info.param.name;
}

// A directory under /tmp, created empty and removed with everything in it on destruction.
class TempDir {
 public:
  explicit TempDir(const std::string& prefix = "gf-journal-") {
    std::string tmpl = "/tmp/" + prefix + "XXXXXX";
    if (::mkdtemp(tmpl.data()) != nullptr) path_ = tmpl;
  }
  ~TempDir() {
    if (path_.empty()) return;
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  bool ok() const { return !path_.empty(); }
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

inline NewEvent make_event(std::string type, std::string payload, std::string key = "",
                           Time time = kSimEpoch) {
  return NewEvent{std::move(type), std::move(payload), std::move(key), time};
}

class JournalContractTest : public ::testing::TestWithParam<JournalContractParam> {
 protected:
  void SetUp() override {
    auto store = GetParam().make_store();
    ASSERT_TRUE(store.ok()) << store.status().to_string();
    store_ = std::move(store).value();
    ASSERT_NO_FATAL_FAILURE(reopen());
  }

  void TearDown() override {
    journal_.reset();
    store_.reset();
  }

  // Closes the journal (if open) and opens a new one on the same store.
  void reopen() {
    journal_.reset();
    auto journal = store_->open();
    ASSERT_TRUE(journal.ok()) << journal.status().to_string();
    journal_ = std::move(journal).value();
  }

  Journal& journal() { return *journal_; }
  JournalStore& store() { return *store_; }

  // Appends and fails the test on error (the result is then empty).
  AppendResult append(const std::vector<NewEvent>& batch) {
    auto result = journal_->append(batch);
    EXPECT_TRUE(result.ok()) << result.status().to_string();
    if (!result.ok()) return {};
    EXPECT_EQ(result->seqs.size(), batch.size());
    EXPECT_EQ(result->duplicate.size(), batch.size());
    return std::move(result).value();
  }

  std::vector<EventRecord> replay_all(Seq after = 0) {
    std::vector<EventRecord> out;
    Status status = journal_->replay(after, [&](const EventRecord& record) {
      out.push_back(record);
      return ok_status();
    });
    EXPECT_TRUE(status.ok()) << status.to_string();
    return out;
  }

  Seq last_seq() {
    auto seq = journal_->last_seq();
    EXPECT_TRUE(seq.ok()) << seq.status().to_string();
    return seq.ok() ? *seq : -1;
  }

  std::optional<Seq> find_key(const std::string& key) {
    auto seq = journal_->find_key(key);
    EXPECT_TRUE(seq.ok()) << seq.status().to_string();
    return seq.ok() ? *seq : std::nullopt;
  }

 private:
  std::unique_ptr<JournalStore> store_;
  std::unique_ptr<Journal> journal_;
};

}  // namespace gf::journal_contract
