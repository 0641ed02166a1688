// Small helpers shared by the SQLite journal's files (journal, history, compaction). Internal to
// src/journal/sqlite/.
#pragma once

#include <fmt/format.h>
#include <sqlite3.h>

#include <string>
#include <string_view>

#include "core/result.h"

namespace gf::sqlite_util {

// Ends one use of a statement kept for the journal's lifetime: reset releases any read lock it
// holds, clear_bindings drops pointers into the caller's buffers (everything is bound STATIC).
class StmtUse {
 public:
  explicit StmtUse(sqlite3_stmt* stmt) : stmt_(stmt) {}
  ~StmtUse() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }
  StmtUse(const StmtUse&) = delete;
  StmtUse& operator=(const StmtUse&) = delete;

 private:
  sqlite3_stmt* stmt_;
};

inline std::string column_string(sqlite3_stmt* stmt, int col) {
  const void* data = sqlite3_column_blob(stmt, col);
  const int size = sqlite3_column_bytes(stmt, col);
  if (data == nullptr || size <= 0) return {};
  return std::string(static_cast<const char*>(data), static_cast<size_t>(size));
}

inline void assign_column(sqlite3_stmt* stmt, int col, std::string& out) {
  const void* data = sqlite3_column_blob(stmt, col);
  const int size = sqlite3_column_bytes(stmt, col);
  if (data == nullptr || size <= 0) {
    out.clear();
  } else {
    out.assign(static_cast<const char*>(data), static_cast<size_t>(size));
  }
}

inline int bind_text(sqlite3_stmt* stmt, int idx, std::string_view text) {
  return sqlite3_bind_text64(stmt, idx, text.data(), text.size(), SQLITE_STATIC, SQLITE_UTF8);
}

// An empty string binds a zero-length blob, never NULL (string_view::data() may be null).
inline int bind_blob(sqlite3_stmt* stmt, int idx, std::string_view data) {
  static const char kEmpty = 0;
  return sqlite3_bind_blob64(stmt, idx, data.empty() ? &kEmpty : data.data(), data.size(),
                             SQLITE_STATIC);
}

inline Status db_error(sqlite3* db, const std::string& path, std::string_view what) {
  if (db != nullptr && ((sqlite3_errcode(db) & 0xff) == SQLITE_CORRUPT ||
                        (sqlite3_errcode(db) & 0xff) == SQLITE_NOTADB)) {
    return internal_error(fmt::format(
        "journal '{}' is damaged: {}: {}; it cannot be trusted from there on (docs/operations.md "
        "\"A damaged journal\")",
        path, what, sqlite3_errmsg(db)));
  }
  std::string msg = "sqlite journal '" + path + "': " + std::string(what) + ": ";
  if (db == nullptr) {
    msg += "out of memory";
  } else {
    msg += sqlite3_errmsg(db);
    msg += fmt::format(" (code {})", sqlite3_extended_errcode(db));
  }
  return internal_error(std::move(msg));
}

// Runs SQL whose result (if any) is one text value, e.g. a PRAGMA.
inline Result<std::string> query_text(sqlite3* db, const std::string& path,
                                      const std::string& sql) {
  sqlite3_stmt* raw = nullptr;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &raw, nullptr) != SQLITE_OK) {
    return db_error(db, path, sql);
  }
  std::string value;
  int rc = sqlite3_step(raw);
  if (rc == SQLITE_ROW) {
    value = column_string(raw, 0);
    rc = sqlite3_step(raw);
    while (rc == SQLITE_ROW) rc = sqlite3_step(raw);
  }
  Status status = rc == SQLITE_DONE ? ok_status() : db_error(db, path, sql);
  sqlite3_finalize(raw);
  if (!status.ok()) return status;
  return value;
}

inline Status exec(sqlite3* db, const std::string& path, const char* sql, std::string_view what) {
  if (sqlite3_exec(db, sql, nullptr, nullptr, nullptr) != SQLITE_OK) {
    return db_error(db, path, what);
  }
  return ok_status();
}

}  // namespace gf::sqlite_util
