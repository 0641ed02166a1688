// A thin RAII layer over libpq for the PostgreSQL journal and lease (docs/replication.md):
// connections, results, parameters sent and read in binary, and errors as Status.
// Not thread-safe: one connection is used by one thread at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

struct pg_conn;
struct pg_result;

namespace gf::pg {

struct ConnCloser {
  void operator()(pg_conn* c) const;
};
struct ResultClearer {
  void operator()(pg_result* r) const;
};
using ConnPtr = std::unique_ptr<pg_conn, ConnCloser>;
using ResultPtr = std::unique_ptr<pg_result, ResultClearer>;

// The URL with any password replaced by "***", for messages and logs.
std::string redact_url(std::string_view url);

// One parameter: bytes sent in binary (bytea, or an int8 from int8()), or SQL NULL.
struct Param {
  std::optional<std::string> value;
};
Param bytes(std::string_view v);
Param int8(int64_t v);
Param null();

class Connection {
 public:
  // Connects (postgres:// or postgresql:// URL, or a libpq keyword string); fails with
  // Unavailable naming the redacted URL and libpq's reason.
  static Result<Connection> open(const std::string& url);

  Connection() = default;

  // Statements that set the session up (SET …, LISTEN …): run now, and again on every new
  // session after a reconnect, so a reconnected session behaves as the first did.
  Status set_session(std::string sql);

  // The statement runners never reconnect: a session lost inside a transaction must fail that
  // transaction, not run its rest in autocommit. Callers call ensure_connected() between
  // transactions.
  // Runs one or more statements without parameters (text results; the last result is returned).
  Result<ResultPtr> exec(std::string_view sql, std::string_view what);
  // Runs one statement with binary parameters; results in binary (read them with the getters).
  Result<ResultPtr> exec_params(std::string_view sql, const std::vector<Param>& params,
                                std::string_view what);
  // COPY … FROM STDIN (FORMAT binary) with `data` as the whole stream.
  Status copy_in(std::string_view sql, std::string_view data, std::string_view what);
  // Re-establishes a broken connection (the server restarted) and replays the session set-up;
  // no-op on a good one. Only between transactions.
  Status ensure_connected();
  bool connected() const;
  // The socket to wait on for notifications, and a check for those that arrived: returns the
  // payload of each notification on `channel` (others are dropped).
  int socket() const;
  Result<std::vector<std::string>> take_notifications(std::string_view channel);

  // The SQLSTATE of the last error a statement answered ("23505" = unique violation), or "".
  const std::string& last_sqlstate() const { return last_sqlstate_; }
  pg_conn* raw() const { return conn_.get(); }
  const std::string& url() const { return url_; }

 private:
  Status error(std::string_view what, pg_result* r = nullptr) const;
  Status check(pg_result* r, std::string_view what) const;

  ConnPtr conn_;
  std::string url_;
  std::vector<std::string> session_;
  mutable std::string last_sqlstate_;
};

// Binary column readers (result in binary format).
int64_t get_int8(pg_result* r, int row, int col);
std::string get_bytes(pg_result* r, int row, int col);
bool is_null(pg_result* r, int row, int col);
int rows(pg_result* r);
// Text column reader (result of exec()).
std::string get_text(pg_result* r, int row, int col);

// COPY binary stream builder.
class CopyWriter {
 public:
  CopyWriter();
  void begin_row(int16_t fields);
  void add_int8(int64_t v);
  void add_bytes(std::string_view v);
  void add_null();
  // Appends the trailer; returns the stream.
  std::string finish();

 private:
  void put16(uint16_t v);
  void put32(uint32_t v);
  std::string buf_;
};

}  // namespace gf::pg
