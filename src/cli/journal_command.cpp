// `gpufleet journal verify DIR`: checks a data directory's journal offline, without writing to it
// (docs/operations.md "A damaged journal"); `gpufleet journal export DIR [--archive ADIR]`: every
// event still kept, archived ones first, as JSON lines (docs/operations.md "What is kept where").
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <iostream>
#include <unordered_set>

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
  auto compacted = (*journal)->compacted_through();
  const Seq through = compacted.ok() ? *compacted : 0;
  std::cout << fmt::format("{}: {} events (seq 1 to {}{}), each as written; ", path, events, last,
                           through > 0 ? fmt::format(", compacted through {}", through) : "")
            << (*snapshot ? fmt::format("latest snapshot at seq {}, as written", (*snapshot)->seq)
                          : std::string("no snapshot"))
            << "\n";
  return 0;
}

// One event as a JSON line: its payload as the JSON object it is.
void print_event(const EventRecord& e) {
  Json line = {{"seq", e.seq}, {"time", format_iso8601(e.time)}, {"type", e.type}};
  auto payload = parse_json(e.payload, kStoredTextLimits);
  line["payload"] = payload.ok() ? *payload : Json(e.payload);
  if (!e.idempotency_key.empty()) line["idempotencyKey"] = e.idempotency_key;
  std::cout << safe_dump(line) << "\n";
}

// The archive's events (when asked), then the live journal's, each seq once.
int export_journal(const std::string& dir, const std::string& archive) {
  std::unordered_set<Seq> seen;
  auto print_new = [&](const EventRecord& e) {
    if (seen.insert(e.seq).second) print_event(e);
    return ok_status();
  };
  if (!archive.empty()) {
    if (Status st = read_archive(archive, print_new); !st.ok()) {
      std::cerr << "error: " << st.message() << "\n";
      return 1;
    }
  }
  SqliteJournalOptions opts;
  opts.read_only = true;
  opts.verify_on_open = false;
  auto journal = SqliteJournal::open(dir + "/journal.db", opts);
  if (!journal.ok()) {
    std::cerr << "error: " << journal.status().message() << "\n";
    return journal.status().code() == ErrorCode::kNotFound ? 2 : 1;
  }
  if (Status st = (*journal)->replay(0, print_new); !st.ok()) {
    std::cerr << "error: " << st.message() << "\n";
    return 1;
  }
  return 0;
}

}  // namespace

void register_journal_command(CLI::App& app, CommandContext& ctx) {
  auto* journal = app.add_subcommand("journal", "check or export a data directory's journal");
  journal->require_subcommand(1);
  auto* verify = journal->add_subcommand(
      "verify",
      "check a journal offline without writing to it: SQLite's integrity check, every event's "
      "checksum and order, every payload JSON, the latest snapshot (exit 1 on damage)");
  auto dir = std::make_shared<std::string>();
  verify->add_option("DIR", *dir, "the data directory (serve --data-dir)")->required();
  verify->callback([&ctx, dir] { ctx.run = [dir] { return verify_journal(*dir); }; });
  auto* exp = journal->add_subcommand(
      "export",
      "print every event still kept as JSON lines: the archive's (serve --journal-archive), then "
      "the live journal's, each seq once");
  auto edir = std::make_shared<std::string>();
  auto archive = std::make_shared<std::string>();
  exp->add_option("DIR", *edir, "the data directory (serve --data-dir)")->required();
  exp->add_option("--archive", *archive, "the archive directory (serve --journal-archive)");
  exp->callback([&ctx, edir, archive] {
    ctx.run = [edir, archive] { return export_journal(*edir, *archive); };
  });
}

}  // namespace gf
