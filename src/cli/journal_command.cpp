// `gpufleet journal verify DIR`: checks a data directory's journal offline, without writing to it
// (docs/operations.md "A damaged journal").
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <iostream>

#include "cli/app.h"
#include "core/json.h"
#include "journal/sqlite/sqlite_journal.h"

namespace gf {

namespace {

// Every event's checksum and order, that every payload is JSON, and the latest snapshot: 0 when
// the journal is whole, 1 with the first damage found, 2 when there is no journal to check.
int verify_journal(const std::string& dir) {
  const std::string path = dir + "/journal.db";
  SqliteJournalOptions opts;
  opts.read_only = true;
  opts.verify_on_open = false;
  auto journal = SqliteJournal::open(path, opts);
  if (!journal.ok()) {
    std::cerr << "error: " << journal.status().message() << "\n";
    return journal.status().code() == ErrorCode::kNotFound ? 2 : 1;
  }
  auto last_seq = (*journal)->last_seq();
  const Seq last = last_seq.ok() ? *last_seq : 0;
  int64_t events = 0;
  Status st = (*journal)->verify(last, [&](const EventRecord& e) -> Status {
    ++events;
    if (!parse_json(e.payload).ok()) {
      return Status(
          ErrorCode::kInternal,
          fmt::format("journal '{}' is damaged: event {} ({}) is not JSON", path, e.seq, e.type));
    }
    return ok_status();
  });
  if (!st.ok()) {
    std::cerr << "error: " << st.message() << "\n";
    std::cerr << fmt::format("{} events before the damage are whole\n", events);
    return 1;
  }
  auto snapshot = (*journal)->latest_snapshot();
  if (!snapshot.ok()) {
    std::cerr << "error: " << snapshot.status().message() << "\n";
    return 1;
  }
  std::cout << fmt::format("{}: {} events (seq 1 to {}), each as written; ", path, events, last)
            << (*snapshot ? fmt::format("latest snapshot at seq {}, as written", (*snapshot)->seq)
                          : std::string("no snapshot"))
            << "\n";
  return 0;
}

}  // namespace

void register_journal_command(CLI::App& app, CommandContext& ctx) {
  auto* journal = app.add_subcommand("journal", "check a data directory's journal");
  journal->require_subcommand(1);
  auto* verify = journal->add_subcommand(
      "verify",
      "check a journal offline without writing to it: SQLite's integrity check, every event's "
      "checksum and order, every payload JSON, the latest snapshot (exit 1 on damage)");
  auto dir = std::make_shared<std::string>();
  verify->add_option("DIR", *dir, "the data directory (serve --data-dir)")->required();
  verify->callback([&ctx, dir] { ctx.run = [dir] { return verify_journal(*dir); }; });
}

}  // namespace gf
