#include "journal/postgres/postgres_lease.h"

#include <fmt/format.h>
#include <poll.h>

#include <algorithm>
#include <charconv>

#include "journal/postgres/postgres_journal.h"

namespace gf {
namespace {

// The lease length in microseconds (at least a millisecond).
pg::Param micros(Duration d) { return pg::int8(std::max<int64_t>(d.count(), 1000)); }

}  // namespace

Result<std::unique_ptr<PostgresLease>> PostgresLease::open(const std::string& url,
                                                           std::string holder) {
  GF_ASSIGN_OR_RETURN(pg::Connection conn, pg::Connection::open(url));
  GF_RETURN_IF_ERROR(ensure_postgres_schema(conn));
  // A takeover waits for an append in flight (its row lock), but never for long: a session
  // stuck in a transaction is ended by the server (idle_in_transaction_session_timeout). Every
  // statement is bounded, so a renewal cannot hang past its lease. The LISTEN is part of the
  // session: a reconnected session listens again.
  GF_RETURN_IF_ERROR(conn.set_session(fmt::format(
      "SET lock_timeout = '2s'; SET statement_timeout = '5s'; LISTEN {}", kEventsChannel)));
  std::unique_ptr<PostgresLease> l(new PostgresLease(std::move(conn), std::move(holder)));
  return l;
}

Result<std::optional<int64_t>> PostgresLease::try_take(Duration lease, const std::string& my_url) {
  GF_RETURN_IF_ERROR(conn_.ensure_connected());
  GF_ASSIGN_OR_RETURN(
      auto r, conn_.exec_params(
                  "UPDATE gf_lease SET epoch = epoch + 1, holder = convert_from($1::bytea, "
                  "'UTF8'), url = convert_from($2::bytea, 'UTF8'), expires_at = "
                  "clock_timestamp() + $3::int8 * interval '1 microsecond' WHERE id = 1 AND "
                  "expires_at < clock_timestamp() RETURNING epoch",
                  {pg::bytes(holder_), pg::bytes(my_url), micros(lease)}, "taking the lease"));
  if (pg::rows(r.get()) == 0) return std::optional<int64_t>();
  return std::optional<int64_t>(pg::get_int8(r.get(), 0, 0));
}

Result<bool> PostgresLease::renew(int64_t epoch, Duration lease) {
  GF_RETURN_IF_ERROR(conn_.ensure_connected());
  GF_ASSIGN_OR_RETURN(
      auto r, conn_.exec_params(
                  "UPDATE gf_lease SET expires_at = clock_timestamp() + $3::int8 * interval '1 "
                  "microsecond' WHERE id = 1 AND epoch = $1::int8 AND holder = "
                  "convert_from($2::bytea, 'UTF8') RETURNING epoch",
                  {pg::int8(epoch), pg::bytes(holder_), micros(lease)}, "renewing the lease"));
  return pg::rows(r.get()) == 1;
}

Status PostgresLease::resign(int64_t epoch) {
  GF_RETURN_IF_ERROR(conn_.ensure_connected());
  return conn_
      .exec_params("UPDATE gf_lease SET expires_at = '-infinity' WHERE id = 1 AND epoch = $1::int8",
                   {pg::int8(epoch)}, "resigning the lease")
      .status();
}

Result<LeaseInfo> PostgresLease::read() {
  GF_RETURN_IF_ERROR(conn_.ensure_connected());
  GF_ASSIGN_OR_RETURN(
      auto r, conn_.exec("SELECT epoch, holder, url, GREATEST(-1e9, LEAST(1e9, EXTRACT(EPOCH FROM "
                         "(expires_at - clock_timestamp())))) FROM gf_lease WHERE id = 1",
                         "reading the lease"));
  LeaseInfo info;
  if (pg::rows(r.get()) != 1) return info;
  info.epoch = std::atoll(pg::get_text(r.get(), 0, 0).c_str());
  info.holder = pg::get_text(r.get(), 0, 1);
  info.url = pg::get_text(r.get(), 0, 2);
  info.remaining_s = std::atof(pg::get_text(r.get(), 0, 3).c_str());
  return info;
}

Status PostgresLease::report(const ReplicaRow& me) {
  GF_RETURN_IF_ERROR(conn_.ensure_connected());
  return conn_
      .exec_params(
          "INSERT INTO gf_replicas(id, url, role, epoch, applied_seq, seen_at) VALUES "
          "(convert_from($1::bytea, 'UTF8'), convert_from($2::bytea, 'UTF8'), "
          "convert_from($3::bytea, 'UTF8'), $4::int8, $5::int8, clock_timestamp()) ON CONFLICT "
          "(id) DO UPDATE SET url = EXCLUDED.url, role = EXCLUDED.role, epoch = EXCLUDED.epoch, "
          "applied_seq = EXCLUDED.applied_seq, seen_at = EXCLUDED.seen_at",
          {pg::bytes(me.id), pg::bytes(me.url), pg::bytes(me.role), pg::int8(me.epoch),
           pg::int8(me.applied_seq)},
          "reporting the replica")
      .status();
}

Result<std::vector<ReplicaRow>> PostgresLease::replicas() {
  GF_RETURN_IF_ERROR(conn_.ensure_connected());
  // A replica silent for a day is gone (a replaced machine): its row goes too.
  GF_RETURN_IF_ERROR(conn_
                         .exec("DELETE FROM gf_replicas WHERE seen_at < clock_timestamp() - "
                               "interval '1 day'",
                               "forgetting replicas gone for a day")
                         .status());
  GF_ASSIGN_OR_RETURN(auto r, conn_.exec("SELECT id, url, role, epoch, applied_seq, EXTRACT(EPOCH "
                                         "FROM (clock_timestamp() - seen_at)) FROM gf_replicas "
                                         "ORDER BY id",
                                         "reading the replicas"));
  std::vector<ReplicaRow> out;
  for (int i = 0; i < pg::rows(r.get()); ++i) {
    ReplicaRow row;
    row.id = pg::get_text(r.get(), i, 0);
    row.url = pg::get_text(r.get(), i, 1);
    row.role = pg::get_text(r.get(), i, 2);
    row.epoch = std::atoll(pg::get_text(r.get(), i, 3).c_str());
    row.applied_seq = std::atoll(pg::get_text(r.get(), i, 4).c_str());
    row.seen_ago_s = std::atof(pg::get_text(r.get(), i, 5).c_str());
    out.push_back(std::move(row));
  }
  return out;
}

Result<Seq> PostgresLease::drain_notifications() {
  GF_ASSIGN_OR_RETURN(auto payloads, conn_.take_notifications(kEventsChannel));
  Seq best = 0;
  for (const std::string& p : payloads) {
    Seq s = 0;
    std::from_chars(p.data(), p.data() + p.size(), s);
    best = std::max(best, s);
  }
  return best;
}

Result<Seq> PostgresLease::wait_for_events(Duration timeout) {
  GF_RETURN_IF_ERROR(conn_.ensure_connected());
  GF_ASSIGN_OR_RETURN(Seq already, drain_notifications());
  if (already > 0) return already;
  pollfd p{conn_.socket(), POLLIN, 0};
  const int ms = static_cast<int>(std::max<int64_t>(0, timeout.count() / 1000));
  if (::poll(&p, 1, ms) < 0) return Seq{0};  // EINTR: the caller loops
  return drain_notifications();
}

}  // namespace gf
