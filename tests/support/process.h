// Starts a child process (the real gpufleet binary) with its stdout on a pipe, so tests can wait
// for a line it prints instead of sleeping.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

extern char** environ;

namespace gf::testing {

class Process {
 public:
  explicit Process(std::vector<std::string> args) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return;
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&actions, fds[0]);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    if (posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), environ) != 0) pid_ = -1;
    posix_spawn_file_actions_destroy(&actions);
    ::close(fds[1]);
    out_ = ::fdopen(fds[0], "r");
  }
  ~Process() {
    if (pid_ > 0 && !exited_) {
      ::kill(pid_, SIGKILL);
      wait();
    }
    if (out_) ::fclose(out_);
  }
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

  bool started() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }

  // Reads stdout lines until one contains `needle` (or EOF). Returns that line, or "".
  std::string wait_for_line(const std::string& needle) {
    char buf[4096];
    while (out_ && std::fgets(buf, sizeof buf, out_)) {
      std::string line(buf);
      output_ += line;
      if (line.find(needle) != std::string::npos) return line;
    }
    return "";
  }
  std::string read_rest() {
    char buf[4096];
    while (out_ && std::fgets(buf, sizeof buf, out_)) output_ += buf;
    return output_;
  }

  void signal(int sig) { ::kill(pid_, sig); }
  // Waits for exit; returns the exit code, or 128+signal.
  int wait() {
    if (exited_) return status_;
    int st = 0;
    ::waitpid(pid_, &st, 0);
    exited_ = true;
    status_ = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    return status_;
  }
  const std::string& output() const { return output_; }

 private:
  pid_t pid_ = -1;
  FILE* out_ = nullptr;
  std::string output_;
  bool exited_ = false;
  int status_ = 0;
};

struct CommandResult {
  int exit_code = -1;
  std::string out;  // stdout and stderr together
};

// Runs a command to completion (stderr joined to stdout).
inline CommandResult run_command(const std::vector<std::string>& args) {
  std::string cmd;
  for (const auto& a : args) {
    std::string quoted = "'";
    for (char c : a) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    cmd += quoted + "' ";
  }
  cmd += "2>&1";
  CommandResult r;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return r;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  int st = ::pclose(p);
  r.exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  return r;
}

}  // namespace gf::testing
