// Compaction of the SQLite journal (docs/operations.md "What is kept where"): the events a kept
// snapshot already holds, older than the journal's retention, leave the events table — deleted,
// or first written to a compressed archive segment. Audit records stay for their own retention.
#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <filesystem>
#include <unordered_set>

#include "core/json.h"
#include "journal/sqlite/sqlite_journal.h"
#include "journal/sqlite/sqlite_util.h"

namespace gf {
namespace {

using namespace sqlite_util;

constexpr int64_t kStepEvents = 20'000;  // events per transaction: an append waits one step

Status fsync_path(const std::string& path, bool directory) {
  const int fd = ::open(path.c_str(), (directory ? O_RDONLY | O_DIRECTORY : O_RDONLY) | O_CLOEXEC);
  if (fd < 0) return internal_error("archive: cannot open " + path + " to sync it");
  const int rc = ::fsync(fd);
  ::close(fd);
  if (rc != 0) return internal_error("archive: fsync of " + path + " failed");
  return ok_status();
}

}  // namespace

Status SqliteJournal::archive(const std::vector<EventRecord>& rows) {
  if (rows.empty()) return ok_status();
  std::error_code ec;
  std::filesystem::create_directories(archive_dir_, ec);
  const std::string name =
      fmt::format("events-{:012}-{:012}.jsonl.gz", rows.front().seq, rows.back().seq);
  const std::string final_path = archive_dir_ + "/" + name;
  const std::string tmp = final_path + ".tmp";
  gzFile gz = gzopen(tmp.c_str(), "wb6");
  if (gz == nullptr) return internal_error("archive: cannot create " + tmp);
  bool ok = true;
  for (const EventRecord& r : rows) {
    Json line = {
        {"seq", r.seq}, {"time_us", to_micros(r.time)}, {"type", r.type}, {"payload", r.payload}};
    if (!r.idempotency_key.empty()) line["idempotency_key"] = r.idempotency_key;
    const std::string text = safe_dump(line) + "\n";
    ok = ok && gzwrite(gz, text.data(), static_cast<unsigned>(text.size())) ==
                   static_cast<int>(text.size());
  }
  ok = gzclose(gz) == Z_OK && ok;
  if (!ok) return internal_error("archive: writing " + tmp + " failed");
  GF_RETURN_IF_ERROR(fsync_path(tmp, false));
  std::filesystem::rename(tmp, final_path, ec);
  if (ec) return internal_error("archive: rename to " + final_path + ": " + ec.message());
  return fsync_path(archive_dir_, true);
}

Result<int64_t> SqliteJournal::compact_step(const CompactionRule& rule, int64_t limit) {
  const Seq upper = std::min(rule.through, last_seq_);
  const int64_t events_before = to_micros(rule.events_before);
  const int64_t audit_before = to_micros(rule.audit_before);
  // The prefix after where compaction got that the rule allows, and the audit records below it
  // whose own retention ended: both read first (for the archive), then removed in one transaction.
  std::vector<EventRecord> gone;
  Seq through = compacted_through_;
  const std::string sql = fmt::format(
      "SELECT seq, time_us, type, idem_key, payload, sum FROM events WHERE "
      "(seq > {0} AND seq <= {1}) OR (seq <= {0} AND type = 'audit.recorded' AND time_us < {2}) "
      "ORDER BY seq LIMIT {3}",
      compacted_through_, upper, audit_before, limit);
  GF_ASSIGN_OR_RETURN(StmtPtr stmt, prepare(sql));
  for (EventRecord r;;) {
    const int rc = sqlite3_step(stmt.get());
    if (rc == SQLITE_DONE) break;
    if (rc != SQLITE_ROW) return error("read events to compact");
    GF_RETURN_IF_ERROR(read_event_row(stmt.get(), r));
    if (r.seq > compacted_through_) {
      if (to_micros(r.time) >= events_before) break;  // the retention window starts here
      through = r.seq;
      if (r.type == "audit.recorded" && to_micros(r.time) >= audit_before) continue;
    }
    gone.push_back(r);
  }
  stmt.reset();
  if (gone.empty() && through == compacted_through_) return 0;
  if (!archive_dir_.empty()) GF_RETURN_IF_ERROR(archive(gone));
  if (Status s = run(begin_.get(), "begin compaction"); !s.ok()) {
    abort_transaction();
    return s;
  }
  Status st = exec(db_.get(), path_,
                   fmt::format("DELETE FROM events WHERE ((seq > {0} AND seq <= {1}) AND (type != "
                               "'audit.recorded' OR time_us < {2})) OR (seq <= {0} AND type = "
                               "'audit.recorded' AND time_us < {2})",
                               compacted_through_, through, audit_before)
                       .c_str(),
                   "delete compacted events");
  if (st.ok()) {
    st = exec(db_.get(), path_,
              fmt::format("INSERT OR REPLACE INTO meta(key, value) VALUES('compacted_through', "
                          "'{}')",
                          through)
                  .c_str(),
              "record compaction");
  }
  if (st.ok()) st = run(commit_.get(), "commit compaction");
  if (!st.ok()) {
    abort_transaction();
    return st;
  }
  compacted_through_ = through;
  return static_cast<int64_t>(gone.size());
}

namespace {

// One archived line into `out`; the error names the segment.
Status parse_archived(const std::string& line, const std::string& file, EventRecord& out) {
  auto j = parse_json(line, kStoredTextLimits);
  if (!j.ok() || !j->is_object() || !(*j)["seq"].is_number_integer() ||
      !(*j)["time_us"].is_number_integer() || !(*j)["type"].is_string() ||
      !(*j)["payload"].is_string()) {
    return internal_error("archive segment " + file +
                          " holds a line that is not an archived event");
  }
  out.seq = (*j)["seq"].get<Seq>();
  out.time = from_micros((*j)["time_us"].get<int64_t>());
  out.type = (*j)["type"].get<std::string>();
  out.payload = (*j)["payload"].get<std::string>();
  out.idempotency_key = j->value("idempotency_key", "");
  return ok_status();
}

}  // namespace

Status read_archive(const std::string& dir, const std::function<Status(const EventRecord&)>& fn) {
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& f : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = f.path().filename().string();
    if (name.starts_with("events-") && name.ends_with(".jsonl.gz")) files.push_back(f.path());
  }
  if (ec) return not_found_error("archive " + dir + ": " + ec.message());
  // Names carry zero-padded seqs: by first seq. A segment of audit records whose own retention
  // ended holds seqs below those of segments written before it.
  std::sort(files.begin(), files.end());
  std::unordered_set<Seq> seen;
  for (const std::string& file : files) {
    gzFile gz = gzopen(file.c_str(), "rb");
    if (gz == nullptr) return internal_error("archive segment " + file + " cannot be opened");
    std::string pending;
    char buf[65536];
    Status st;
    for (int n; st.ok() && (n = gzread(gz, buf, sizeof buf)) > 0;) {
      pending.append(buf, static_cast<size_t>(n));
      for (size_t nl; st.ok() && (nl = pending.find('\n')) != std::string::npos;) {
        EventRecord r;
        st = parse_archived(pending.substr(0, nl), file, r);
        pending.erase(0, nl + 1);
        if (st.ok() && seen.insert(r.seq).second) st = fn(r);
      }
    }
    gzclose(gz);
    if (!st.ok()) return st;
    if (!pending.empty()) return internal_error("archive segment " + file + " ends mid-line");
  }
  return ok_status();
}

Result<CompactionResult> SqliteJournal::compact(const CompactionRule& rule) {
  if (read_only_) return internal_error("sqlite journal '" + path_ + "' is read-only");
  if (replaying_) return internal_error("sqlite journal: compact called from inside replay");
  CompactionResult out;
  for (;;) {
    const Seq before = compacted_through_;
    GF_ASSIGN_OR_RETURN(int64_t n, compact_step(rule, kStepEvents));
    out.removed += n;
    if (n == 0 && compacted_through_ == before) break;
  }
  out.compacted_through = compacted_through_;
  return out;
}

}  // namespace gf
