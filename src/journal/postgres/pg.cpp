#include "journal/postgres/pg.h"

#include <endian.h>
#include <fmt/format.h>
#include <libpq-fe.h>

#include <cstring>

namespace gf::pg {

void ConnCloser::operator()(pg_conn* c) const { PQfinish(c); }
void ResultClearer::operator()(pg_result* r) const { PQclear(r); }

std::string redact_url(std::string_view url) {
  // scheme://user:password@host… → scheme://user:***@host…
  const size_t scheme = url.find("://");
  if (scheme == std::string_view::npos) return std::string(url);
  const size_t at = url.find('@', scheme + 3);
  const size_t colon = url.find(':', scheme + 3);
  if (at == std::string_view::npos || colon == std::string_view::npos || colon > at) {
    return std::string(url);
  }
  return std::string(url.substr(0, colon + 1)) + "***" + std::string(url.substr(at));
}

Param bytes(std::string_view v) { return Param{std::string(v)}; }
Param int8(int64_t v) {
  const uint64_t be = htobe64(static_cast<uint64_t>(v));
  std::string s(8, '\0');
  std::memcpy(s.data(), &be, 8);
  return Param{std::move(s)};
}
Param null() { return Param{std::nullopt}; }

Result<Connection> Connection::open(const std::string& url) {
  Connection c;
  c.url_ = url;
  // Our defaults first, then the URL (expanded from dbname): what the URL says wins. A server
  // that does not answer is given up on after 5 s, and a dead peer is noticed by keepalives.
  const char* keys[] = {"connect_timeout",
                        "keepalives_idle",
                        "keepalives_interval",
                        "keepalives_count",
                        "application_name",
                        "dbname",
                        nullptr};
  const char* values[] = {"5", "5", "2", "3", "gpufleet", url.c_str(), nullptr};
  c.conn_.reset(PQconnectdbParams(keys, values, /*expand_dbname=*/1));
  if (!c.conn_ || PQstatus(c.conn_.get()) != CONNECTION_OK) {
    std::string why = c.conn_ ? PQerrorMessage(c.conn_.get()) : "out of memory";
    while (!why.empty() && (why.back() == '\n' || why.back() == ' ')) why.pop_back();
    return unavailable_error(
        fmt::format("cannot connect to PostgreSQL at {}: {}", redact_url(url), why));
  }
  // Notices (e.g. "relation already exists, skipping") are not errors: keep them off stderr.
  PQsetNoticeProcessor(
      c.conn_.get(), [](void*, const char*) {}, nullptr);
  return c;
}

Status Connection::error(std::string_view what, pg_result* r) const {
  const char* state = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : nullptr;
  last_sqlstate_ = state ? state : "";
  std::string why = r ? PQresultErrorMessage(r) : "";
  if (why.empty()) why = conn_ ? PQerrorMessage(conn_.get()) : "not connected";
  while (!why.empty() && (why.back() == '\n' || why.back() == ' ')) why.pop_back();
  const bool broken = !conn_ || PQstatus(conn_.get()) != CONNECTION_OK;
  const std::string msg = fmt::format("PostgreSQL {}: {}", what, why);
  return broken ? unavailable_error(msg) : internal_error(msg);
}

Status Connection::check(pg_result* r, std::string_view what) const {
  if (r == nullptr) return error(what);
  const ExecStatusType st = PQresultStatus(r);
  if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK || st == PGRES_COPY_IN) return ok_status();
  return error(what, r);
}

bool Connection::connected() const { return conn_ && PQstatus(conn_.get()) == CONNECTION_OK; }

Status Connection::set_session(std::string sql) {
  GF_RETURN_IF_ERROR(exec(sql, "session set-up").status());
  session_.push_back(std::move(sql));
  return ok_status();
}

Status Connection::ensure_connected() {
  if (!conn_) return unavailable_error("PostgreSQL: not connected");
  if (PQstatus(conn_.get()) == CONNECTION_OK) return ok_status();
  PQreset(conn_.get());
  if (PQstatus(conn_.get()) != CONNECTION_OK) return error("reconnect");
  for (const std::string& sql : session_) {
    GF_RETURN_IF_ERROR(exec(sql, "session set-up after a reconnect").status());
  }
  return ok_status();
}

Result<ResultPtr> Connection::exec(std::string_view sql, std::string_view what) {
  ResultPtr r(PQexec(conn_.get(), std::string(sql).c_str()));
  GF_RETURN_IF_ERROR(check(r.get(), what));
  return r;
}

Result<ResultPtr> Connection::exec_params(std::string_view sql, const std::vector<Param>& params,
                                          std::string_view what) {
  std::vector<const char*> values;
  std::vector<int> lengths;
  std::vector<int> formats(params.size(), 1);
  values.reserve(params.size());
  lengths.reserve(params.size());
  for (const Param& p : params) {
    values.push_back(p.value ? p.value->data() : nullptr);
    lengths.push_back(p.value ? static_cast<int>(p.value->size()) : 0);
  }
  ResultPtr r(PQexecParams(conn_.get(), std::string(sql).c_str(), static_cast<int>(params.size()),
                           nullptr, values.data(), lengths.data(), formats.data(), 1));
  GF_RETURN_IF_ERROR(check(r.get(), what));
  return r;
}

Status Connection::copy_in(std::string_view sql, std::string_view data, std::string_view what) {
  ResultPtr start(PQexec(conn_.get(), std::string(sql).c_str()));
  if (!start || PQresultStatus(start.get()) != PGRES_COPY_IN) return error(what, start.get());
  constexpr size_t kChunk = 1 << 20;
  for (size_t off = 0; off < data.size(); off += kChunk) {
    const size_t n = std::min(kChunk, data.size() - off);
    if (PQputCopyData(conn_.get(), data.data() + off, static_cast<int>(n)) != 1) {
      return error(what);
    }
  }
  if (PQputCopyEnd(conn_.get(), nullptr) != 1) return error(what);
  Status st = ok_status();
  while (pg_result* r = PQgetResult(conn_.get())) {
    ResultPtr owned(r);
    if (st.ok()) st = check(r, what);
  }
  return st;
}

int Connection::socket() const { return conn_ ? PQsocket(conn_.get()) : -1; }

Result<std::vector<std::string>> Connection::take_notifications(std::string_view channel) {
  if (PQconsumeInput(conn_.get()) != 1) return error("reading notifications");
  std::vector<std::string> out;
  while (PGnotify* n = PQnotifies(conn_.get())) {
    if (channel == n->relname) out.emplace_back(n->extra ? n->extra : "");
    PQfreemem(n);
  }
  return out;
}

int64_t get_int8(pg_result* r, int row, int col) {
  uint64_t be = 0;
  if (PQgetlength(r, row, col) == 8) std::memcpy(&be, PQgetvalue(r, row, col), 8);
  return static_cast<int64_t>(be64toh(be));
}

std::string get_bytes(pg_result* r, int row, int col) {
  return std::string(PQgetvalue(r, row, col), static_cast<size_t>(PQgetlength(r, row, col)));
}

bool is_null(pg_result* r, int row, int col) { return PQgetisnull(r, row, col) != 0; }
int rows(pg_result* r) { return PQntuples(r); }
std::string get_text(pg_result* r, int row, int col) { return PQgetvalue(r, row, col); }

CopyWriter::CopyWriter() {
  static constexpr char kSignature[] = "PGCOPY\n\377\r\n";  // 11 bytes with the trailing NUL
  buf_.append(kSignature, 11);
  put32(0);  // flags
  put32(0);  // header extension length
}

void CopyWriter::put16(uint16_t v) {
  const uint16_t be = htobe16(v);
  buf_.append(reinterpret_cast<const char*>(&be), 2);
}
void CopyWriter::put32(uint32_t v) {
  const uint32_t be = htobe32(v);
  buf_.append(reinterpret_cast<const char*>(&be), 4);
}
void CopyWriter::begin_row(int16_t fields) { put16(static_cast<uint16_t>(fields)); }
void CopyWriter::add_int8(int64_t v) {
  put32(8);
  const uint64_t be = htobe64(static_cast<uint64_t>(v));
  buf_.append(reinterpret_cast<const char*>(&be), 8);
}
void CopyWriter::add_bytes(std::string_view v) {
  put32(static_cast<uint32_t>(v.size()));
  buf_.append(v);
}
void CopyWriter::add_null() { put32(0xffffffffu); }
std::string CopyWriter::finish() {
  put16(0xffffu);
  return std::move(buf_);
}

}  // namespace gf::pg
