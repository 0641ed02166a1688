// The PostgreSQL journal's history tables (journal/history.h): filing a record in the append's
// transaction, and a reader on a connection of its own for the API's threads.
#include <fmt/format.h>

#include <mutex>

#include "journal/postgres/postgres_journal.h"

namespace gf {
namespace {

class PgHistoryReader final : public HistoryReader {
 public:
  explicit PgHistoryReader(pg::Connection conn) : conn_(std::move(conn)) {}

  Result<HistoryPage> query(const HistoryQuery& q) override {
    std::string sql =
        "SELECT row, seq, kind, id, name, tenant, state, created_us, ended_us, record "
        "FROM gf_history WHERE kind = $1::text AND row > $2::int8";
    std::vector<pg::Param> params = {pg::bytes(q.kind), pg::int8(q.after_row)};
    auto add = [&](const std::optional<std::string>& v, std::string_view column) {
      if (!v) return;
      params.push_back(pg::bytes(*v));
      sql += fmt::format(" AND {} = ${}::text", column, params.size());
    };
    add(q.id, "id");
    add(q.name, "name");
    add(q.tenant, "tenant");
    add(q.state, "state");
    if (q.since) {
      params.push_back(pg::int8(to_micros(*q.since)));
      sql += fmt::format(" AND ended_us >= ${}::int8", params.size());
    }
    if (q.until) {
      params.push_back(pg::int8(to_micros(*q.until)));
      sql += fmt::format(" AND ended_us < ${}::int8", params.size());
    }
    const size_t limit = std::clamp<size_t>(q.limit, 1, HistoryQuery::kMaxLimit);
    sql += fmt::format(" ORDER BY row LIMIT {}", limit + 1);
    std::lock_guard lock(mu_);
    GF_RETURN_IF_ERROR(conn_.ensure_connected());
    GF_ASSIGN_OR_RETURN(pg::ResultPtr r, conn_.exec_params(sql, params, "history query"));
    HistoryPage page;
    for (int i = 0; i < pg::rows(r.get()); ++i) {
      if (page.records.size() == limit) {
        page.next_row = page.records.back().row;
        break;
      }
      HistoryRecord h;
      h.row = pg::get_int8(r.get(), i, 0);
      h.seq = pg::get_int8(r.get(), i, 1);
      h.kind = pg::get_bytes(r.get(), i, 2);
      h.id = pg::get_bytes(r.get(), i, 3);
      h.name = pg::get_bytes(r.get(), i, 4);
      h.tenant = pg::get_bytes(r.get(), i, 5);
      h.state = pg::get_bytes(r.get(), i, 6);
      h.created = from_micros(pg::get_int8(r.get(), i, 7));
      h.ended = from_micros(pg::get_int8(r.get(), i, 8));
      GF_ASSIGN_OR_RETURN(h.record,
                          decompress_record(pg::get_bytes(r.get(), i, 9), h.kind + " " + h.id));
      page.records.push_back(std::move(h));
    }
    return page;
  }

  Result<int64_t> count() override {
    std::lock_guard lock(mu_);
    GF_RETURN_IF_ERROR(conn_.ensure_connected());
    GF_ASSIGN_OR_RETURN(pg::ResultPtr r,
                        conn_.exec_params("SELECT count(*)::int8 FROM gf_history", {}, "count"));
    return pg::get_int8(r.get(), 0, 0);
  }

  Result<std::vector<HistoryRun>> runs_between(Time from, Time to,
                                               const std::string& cluster) override {
    std::lock_guard lock(mu_);
    GF_RETURN_IF_ERROR(conn_.ensure_connected());
    GF_ASSIGN_OR_RETURN(
        pg::ResultPtr r,
        conn_.exec_params("SELECT job_id, job_queue, quota_share, cluster, start_us, end_us, "
                          "micros_per_hour FROM gf_history_runs WHERE end_us > $1::int8 AND "
                          "start_us < $2::int8 AND ($3::text = '' OR cluster = $3::text) "
                          "ORDER BY row",
                          {pg::int8(to_micros(from)), pg::int8(to_micros(to)), pg::bytes(cluster)},
                          "history runs"));
    std::vector<HistoryRun> out;
    for (int i = 0; i < pg::rows(r.get()); ++i) {
      out.push_back(HistoryRun{
          pg::get_bytes(r.get(), i, 0), pg::get_bytes(r.get(), i, 1), pg::get_bytes(r.get(), i, 2),
          pg::get_bytes(r.get(), i, 3), from_micros(pg::get_int8(r.get(), i, 4)),
          from_micros(pg::get_int8(r.get(), i, 5)), pg::get_int8(r.get(), i, 6)});
    }
    return out;
  }

 private:
  pg::Connection conn_;
  std::mutex mu_;
};

}  // namespace

Status PostgresJournal::insert_history(Seq seq, const HistoryRecord& h) {
  GF_RETURN_IF_ERROR(
      conn_
          .exec_params("INSERT INTO gf_history(seq, kind, id, name, tenant, state, created_us, "
                       "ended_us, record) VALUES ($1::int8, $2::text, $3::text, $4::text, "
                       "$5::text, $6::text, $7::int8, $8::int8, $9::bytea)",
                       {pg::int8(seq), pg::bytes(h.kind), pg::bytes(h.id), pg::bytes(h.name),
                        pg::bytes(h.tenant), pg::bytes(h.state), pg::int8(to_micros(h.created)),
                        pg::int8(to_micros(h.ended)), pg::bytes(compress_record(h.record))},
                       "file history")
          .status());
  for (const HistoryRun& r : h.runs) {
    GF_RETURN_IF_ERROR(
        conn_
            .exec_params("INSERT INTO gf_history_runs(job_id, job_queue, quota_share, cluster, "
                         "start_us, end_us, micros_per_hour) VALUES ($1::text, $2::text, "
                         "$3::text, $4::text, $5::int8, $6::int8, $7::int8)",
                         {pg::bytes(r.job_id), pg::bytes(r.job_queue), pg::bytes(r.quota_share),
                          pg::bytes(r.cluster), pg::int8(to_micros(r.start)),
                          pg::int8(to_micros(r.end)), pg::int8(r.micros_per_hour)},
                         "file history run")
            .status());
  }
  return ok_status();
}

Result<std::unique_ptr<HistoryReader>> PostgresJournal::open_history_reader() {
  GF_ASSIGN_OR_RETURN(pg::Connection conn, pg::Connection::open(url_));
  return std::unique_ptr<HistoryReader>(new PgHistoryReader(std::move(conn)));
}

}  // namespace gf
