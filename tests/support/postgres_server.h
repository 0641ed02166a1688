// A real PostgreSQL 15 server for one test: initdb into a fresh directory, start on loopback at
// a free port, and stop by its postmaster's pid when the object goes away. initdb and postgres
// refuse to run as root, so as root both run as the `postgres` user (Debian's package creates
// it). Durability settings are relaxed (fsync off): these tests check ordering and fencing, not
// the disk. Benchmarks pass durable = true.
#pragma once

#include <pwd.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>
#include <vector>

#include "support/ports.h"
#include "support/process.h"

namespace gf::testing {

inline const std::string kPostgresBin = "/usr/lib/postgresql/15/bin";

class PostgresServer {
 public:
  explicit PostgresServer(bool durable = false) {
    if (!std::filesystem::exists(kPostgresBin + "/initdb")) {
      error_ = "PostgreSQL 15 is not installed (scripts/setup installs it)";
      return;
    }
    std::string tmpl = "/tmp/gf-pg-XXXXXX";
    if (::mkdtemp(tmpl.data()) == nullptr) {
      error_ = "mkdtemp failed";
      return;
    }
    dir_ = tmpl;
    std::vector<std::string>& as_user = as_user_;
    if (::geteuid() == 0) {
      passwd* pw = ::getpwnam("postgres");
      if (pw == nullptr) {
        error_ = "running as root and there is no postgres user to run PostgreSQL as";
        return;
      }
      if (::chown(dir_.c_str(), pw->pw_uid, pw->pw_gid) != 0) {
        error_ = "cannot chown " + dir_;
        return;
      }
      as_user = {"/usr/sbin/runuser", "-u", "postgres", "--"};
    }
    CommandResult init = run({kPostgresBin + "/initdb", "-D", dir_ + "/data", "-A", "trust", "-U",
                              "postgres", "-E", "UTF8", "--locale=C.UTF-8", "--no-sync"});
    if (init.exit_code != 0) {
      error_ = "initdb failed: " + init.out;
      return;
    }
    std::string& settings = settings_;
    settings = "-k " + dir_ + " -c listen_addresses=127.0.0.1 -c max_connections=200";
    if (!durable) settings += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off";
    // Another test may take the port between our probe and the bind: try a few.
    for (int attempt = 0; attempt < 5 && port_ == 0; ++attempt) {
      const int port = free_tcp_port();
      CommandResult start =
          run({kPostgresBin + "/pg_ctl", "-D", dir_ + "/data", "-l", dir_ + "/server.log", "-w",
               "-s", "-o", settings + " -p " + std::to_string(port), "start"});
      if (start.exit_code == 0)
        port_ = port;
      else
        error_ = "pg_ctl start failed: " + start.out + log_tail();
    }
    if (port_ != 0) error_.clear();
  }

  ~PostgresServer() {
    stop();
    std::error_code ec;
    if (!dir_.empty()) std::filesystem::remove_all(dir_, ec);
  }
  PostgresServer(const PostgresServer&) = delete;
  PostgresServer& operator=(const PostgresServer&) = delete;

  // Immediate shutdown, then waits for the postmaster's pid to go away (pg_ctl is not our child).
  void stop() {
    if (const pid_t pid = postmaster_pid(); pid > 0) {
      ::kill(pid, SIGQUIT);
      for (int i = 0; i < 200000 && ::kill(pid, 0) == 0; ++i) ::usleep(100);
    }
  }
  // Starts it again on its port after stop(): true when it came up.
  bool restart() {
    return run({kPostgresBin + "/pg_ctl", "-D", dir_ + "/data", "-l", dir_ + "/server.log", "-w",
                "-s", "-o", settings_ + " -p " + std::to_string(port_), "start"})
               .exit_code == 0;
  }

  bool ok() const { return port_ != 0; }
  const std::string& error() const { return error_; }
  int port() const { return port_; }
  // A libpq URL for `database` (postgres exists from the start).
  std::string url(const std::string& database = "postgres") const {
    return "postgresql://postgres@127.0.0.1:" + std::to_string(port_) + "/" + database;
  }
  // Runs SQL through psql; returns its output (rows unaligned, tuples only) and exit code.
  CommandResult psql(const std::string& sql, const std::string& database = "postgres") const {
    return run_command({"/usr/bin/psql", "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-d",
                        url(database), "-c", sql});
  }

 private:
  CommandResult run(std::vector<std::string> args) const {
    std::vector<std::string> full = as_user_;
    full.insert(full.end(), args.begin(), args.end());
    return run_command(full);
  }
  pid_t postmaster_pid() const {
    std::ifstream in(dir_ + "/data/postmaster.pid");
    long pid = 0;
    return (in >> pid) ? static_cast<pid_t>(pid) : -1;
  }
  std::string log_tail() const {
    std::ifstream in(dir_ + "/server.log");
    std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    return all.size() > 2000 ? all.substr(all.size() - 2000) : all;
  }

  std::string dir_;
  std::string error_;
  int port_ = 0;
  std::vector<std::string> as_user_;  // runuser -u postgres -- when running as root
  std::string settings_;              // the server's -o options but its port
};

}  // namespace gf::testing
