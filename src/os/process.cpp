#include "os/process.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "core/clock.h"

extern char** environ;

namespace gf::os {

namespace {

// The whole environment of the child as "NAME=value" strings.
std::vector<std::string> child_environment(const SpawnOptions& o) {
  std::map<std::string, std::string> vars;
  std::vector<std::string> order;
  auto set = [&](const std::string& k, const std::string& v) {
    if (!vars.contains(k)) order.push_back(k);
    vars[k] = v;
  };
  if (o.inherit_env) {
    for (char** e = environ; e && *e; ++e) {
      const std::string kv = *e;
      const size_t eq = kv.find('=');
      if (eq != std::string::npos) set(kv.substr(0, eq), kv.substr(eq + 1));
    }
  }
  for (const auto& [k, v] : o.env) set(k, v);
  std::vector<std::string> out;
  for (const std::string& k : order) out.push_back(k + "=" + vars[k]);
  return out;
}

// argv[0] resolved against PATH ("" when not found).
std::string resolve(const std::string& name, const std::vector<std::string>& env) {
  if (name.find('/') != std::string::npos) return name;
  std::string path = "/usr/local/bin:/usr/bin:/bin";
  for (const std::string& kv : env) {
    if (kv.rfind("PATH=", 0) == 0) path = kv.substr(5);
  }
  std::stringstream ss(path);
  for (std::string dir; std::getline(ss, dir, ':');) {
    const std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

// Closes every descriptor from `from` up, except `keep_a` and `keep_b` (-1: none): a child keeps
// none of its spawner's sockets, journal or logs, whether or not they were opened close-on-exec
// (a library's may not be), and a shim, which never execs, holds none either
// (docs/security.md "Descriptors"). Async-signal-safe: system calls only.
void close_descriptors_except(int from, int keep_a, int keep_b) {
  int keep[2] = {std::min(keep_a, keep_b), std::max(keep_a, keep_b)};
  int lo = from;
  for (const int k : keep) {
    if (k < lo) continue;
    if (k > lo) ::close_range(static_cast<unsigned>(lo), static_cast<unsigned>(k - 1), 0);
    lo = k + 1;
  }
  if (::close_range(static_cast<unsigned>(lo), ~0U, 0) == 0 || errno != ENOSYS) return;
  // A kernel before 5.9: one by one, up to the descriptor limit the child inherited.
  struct rlimit limit {};
  const int top = ::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < (1u << 20)
                      ? static_cast<int>(limit.rlim_cur)
                      : (1 << 20);
  for (int fd = from; fd < top; ++fd) {
    if (fd != keep_a && fd != keep_b) ::close(fd);
  }
}

// The child's side of spawn, after fork: only async-signal-safe calls until execve.
[[noreturn]] void exec_child(const std::string& file, std::vector<char*>& argv,
                             std::vector<char*>& envp, const std::string& cwd, int out,
                             int devnull) {
  if (devnull >= 0) ::dup2(devnull, STDIN_FILENO);
  ::dup2(out, STDOUT_FILENO);
  ::dup2(out, STDERR_FILENO);
  close_descriptors_except(STDERR_FILENO + 1, -1, -1);
  if (!cwd.empty() && ::chdir(cwd.c_str()) != 0) ::_exit(126);
  // Signals the server ignores or blocks must not stay so in the child.
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  ::signal(SIGPIPE, SIG_DFL);
  ::signal(SIGTERM, SIG_DFL);
  ::signal(SIGINT, SIG_DFL);
  ::execve(file.c_str(), argv.data(), envp.data());
  ::_exit(127);
}

// In the first process of new PID, mount and UTS namespaces: mounts stop propagating to the
// host, /proc shows this namespace, the hostname is `hostname`. Async-signal-safe calls only.
void enter_namespaces(const std::string& hostname) {
  // Without private mounts the new /proc would show on the host: better not to run at all.
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) ::_exit(126);
  ::mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr);
  if (!hostname.empty()) ::sethostname(hostname.data(), hostname.size());
}

// Process 1 of an isolated command's PID namespace, as a container runtime's init: the command
// runs as process 2, so it gets the stop signals sent to the group (process 1 of a namespace
// ignores every signal it has no handler for, and a `sleep` would sit out the whole grace
// period). It reaps the namespace's orphans and ends as the command ended (128 + the signal);
// its end kills what is left in the namespace.
[[noreturn]] void run_init(pid_t command) {
  for (;;) {
    int st = 0;
    const pid_t r = ::waitpid(-1, &st, 0);
    if (r == command) {
      ::_exit(WIFEXITED(st) ? WEXITSTATUS(st) : WIFSIGNALED(st) ? 128 + WTERMSIG(st) : 1);
    }
    if (r < 0 && errno != EINTR) ::_exit(1);
  }
}

// The spawner of this shim (set before its handler is installed).
pid_t shim_spawner = 0;

// The spawner died (PR_SET_PDEATHSIG): the whole group goes, the shim with it. A SIGUSR2 from
// anyone else (a pod signalling its own group) while the spawner lives is ignored.
void kill_group(int) {
  if (::getppid() != shim_spawner) ::kill(0, SIGKILL);
}

// The shim of a die_with_parent spawn (see spawn): waits for `command`, reaping the orphans of
// its tree, and ends as the command ended, after sending SIGTERM to what it left in the group. It
// ignores SIGTERM and SIGINT (a stop signals the whole group: the command decides, within the grace
// period); the spawner's death (PR_SET_PDEATHSIG) kills the group at once.
[[noreturn]] void run_shim(pid_t command, pid_t spawner) {
  shim_spawner = spawner;
  struct sigaction sa {};
  sa.sa_handler = kill_group;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGUSR2, &sa, nullptr);
  ::signal(SIGTERM, SIG_IGN);
  ::signal(SIGINT, SIG_IGN);
  ::signal(SIGHUP, SIG_IGN);
  ::signal(SIGPIPE, SIG_IGN);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  ::prctl(PR_SET_PDEATHSIG, SIGUSR2);
  kill_group(0);  // the spawner died before prctl took effect
  int status = 0;
  for (;;) {
    int st = 0;
    const pid_t r = ::waitpid(-1, &st, 0);
    if (r == command) {
      status = st;
      break;
    }
    if (r < 0 && errno != EINTR) break;
  }
  // What the command left behind in its group is asked to stop (the shim ignores SIGTERM).
  ::kill(0, SIGTERM);
  ::signal(SIGTERM, SIG_DFL);
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    ::signal(sig, SIG_DFL);
    ::kill(::getpid(), sig);  // end as the command did
  }
  ::_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 1);
}

}  // namespace

Result<pid_t> spawn(const SpawnOptions& o) {
  if (o.argv.empty()) return validation_error("spawn: no command");
  // Everything the child needs is prepared before fork: between fork and exec a child of a
  // threaded process may only make async-signal-safe calls.
  const std::vector<std::string> env = child_environment(o);
  const std::string file = resolve(o.argv[0], env);
  if (file.empty()) return validation_error(o.argv[0] + ": command not found");
  if (!o.cwd.empty() && ::access(o.cwd.c_str(), X_OK) != 0) {
    return validation_error(o.argv[0] + ": working directory " + o.cwd + ": " +
                            std::strerror(errno));
  }
  std::vector<char*> argv, envp;
  for (const std::string& a : o.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (const std::string& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  const int out = o.output_fd >= 0 ? ::fcntl(o.output_fd, F_DUPFD_CLOEXEC, 0)
                                   : ::open(o.output.empty() ? "/dev/null" : o.output.c_str(),
                                            O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (out < 0) {
    return validation_error(o.argv[0] + ": output " + o.output + ": " + std::strerror(errno));
  }
  const int devnull = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  const pid_t parent = ::getpid();
  // Every signal is blocked across the fork: a stop signal sent to the new group at once then
  // waits until the child has set its dispositions (the shim ignores SIGTERM; exec_child restores
  // the defaults), instead of killing the shim before it could and orphaning the command.
  sigset_t all, before;
  sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &before);
  const pid_t pid = ::fork();
  if (pid != 0) ::pthread_sigmask(SIG_SETMASK, &before, nullptr);
  if (pid < 0) {
    ::close(out);
    if (devnull >= 0) ::close(devnull);
    return internal_error(std::string("fork: ") + std::strerror(errno));
  }
  if (pid == 0) {
    close_descriptors_except(STDERR_FILENO + 1, out, devnull);
    if (o.new_session) ::setsid();
    if (o.die_with_parent) {
      // A shim between the spawner and the command, so that the command's tree (what a shell
      // starts) dies with the spawner, as a node's processes die with its host: the shim reaps
      // orphans of the tree (a subreaper) and kills the process group when the spawner dies or
      // stops it when the command ends. Without namespaces, a process that leaves the group
      // (setsid, as a daemon does) escapes it; isolated, the PID namespace holds every one.
      ::prctl(PR_SET_CHILD_SUBREAPER, 1);
      // Isolated: the command is process 1 of its own PID namespace (its tree dies with it, and
      // it sees only its own processes), with its own mounts (/proc of that namespace) and
      // hostname. Where the kernel refuses, it runs as it would without.
      const bool isolated = o.isolate && ::unshare(CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWUTS) == 0;
      const pid_t command = ::fork();
      if (command == 0) {
        if (isolated) {
          enter_namespaces(o.hostname);
          const pid_t main = ::fork();
          if (main == 0) exec_child(file, argv, envp, o.cwd, out, devnull);
          if (main < 0) ::_exit(127);
          run_init(main);
        }
        exec_child(file, argv, envp, o.cwd, out, devnull);
      }
      if (command < 0) ::_exit(127);
      run_shim(command, parent);
    }
    exec_child(file, argv, envp, o.cwd, out, devnull);
  }
  ::close(out);
  if (devnull >= 0) ::close(devnull);
  return pid;
}

bool namespaces_allowed() {
  static const bool allowed = [] {
    const pid_t pid = ::fork();
    if (pid < 0) return false;
    if (pid == 0) ::_exit(::unshare(CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWUTS) == 0 ? 0 : 1);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
  }();
  return allowed;
}

Result<Output> run(SpawnOptions o, std::chrono::milliseconds timeout, size_t max_bytes) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    return internal_error(std::string("pipe: ") + std::strerror(errno));
  o.output_fd = fds[1];
  Result<pid_t> pid = spawn(o);
  ::close(fds[1]);
  if (!pid.ok()) {
    ::close(fds[0]);
    return pid.status();
  }
  Output result;
  const int64_t deadline = monotonic_nanos() + timeout.count() * 1'000'000;
  char buf[65536];
  for (;;) {
    const int64_t left_ms = (deadline - monotonic_nanos()) / 1'000'000;
    if (left_ms <= 0) {
      result.timed_out = true;
      signal(*pid, SIGKILL);
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left_ms, 1000)));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    const ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // EOF: the command (and whatever kept its output open) is done
    const size_t keep = std::min(static_cast<size_t>(n), max_bytes - result.out.size());
    result.out.append(buf, keep);
    if (keep < static_cast<size_t>(n)) result.truncated = true;
  }
  ::close(fds[0]);
  // Its output closed; its end is still bounded by the deadline (a tool may close its output
  // and hang).
  for (;;) {
    if (auto end = reap(*pid)) {
      result.exit = *end;
      return result;
    }
    if (monotonic_nanos() >= deadline) {
      result.timed_out = true;
      signal(*pid, SIGKILL);
      result.exit = wait(*pid).value_or(Exit{128 + SIGKILL, true});
      return result;
    }
    ::poll(nullptr, 0, 5);
  }
}

std::optional<Exit> wait(pid_t pid) {
  int status = 0;
  pid_t r;
  while ((r = ::waitpid(pid, &status, 0)) < 0 && errno == EINTR) {
  }
  if (r != pid) return std::nullopt;
  if (WIFEXITED(status)) return Exit{WEXITSTATUS(status), false};
  if (WIFSIGNALED(status)) return Exit{128 + WTERMSIG(status), true};
  return Exit{1, false};
}

std::optional<Exit> reap(pid_t pid) {
  int status = 0;
  const pid_t r = ::waitpid(pid, &status, WNOHANG);
  if (r != pid) return std::nullopt;
  if (WIFEXITED(status)) return Exit{WEXITSTATUS(status), false};
  if (WIFSIGNALED(status)) return Exit{128 + WTERMSIG(status), true};
  return Exit{1, false};
}

bool alive(pid_t pid, const std::string& cmdline_contains) {
  if (pid <= 0 || ::kill(pid, 0) != 0) return false;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (std::getline(stat, line)) {
    const size_t close = line.rfind(')');
    if (close != std::string::npos && close + 2 < line.size() && line[close + 2] == 'Z')
      return false;  // a zombie: ended, not yet reaped
  }
  if (cmdline_contains.empty()) return true;
  std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline", std::ios::binary);
  std::string cmdline((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (char& c : cmdline) {
    if (c == '\0') c = ' ';
  }
  return cmdline.find(cmdline_contains) != std::string::npos;
}

namespace {

struct ProcEntry {
  pid_t pid = 0;
  pid_t ppid = 0;
  bool marked = false;  // its environment holds the entry
};

// /proc/<pid>: its parent, and whether its environment holds `entry`; nullopt when it is gone, a
// zombie, or another user's.
std::optional<ProcEntry> read_proc(pid_t pid, const std::string& entry) {
  const std::string base = "/proc/" + std::to_string(pid);
  struct stat st {};
  if (::stat(base.c_str(), &st) != 0 || st.st_uid != ::getuid()) return std::nullopt;
  std::ifstream stat(base + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return std::nullopt;
  const size_t close = line.rfind(')');
  if (close == std::string::npos || close + 4 >= line.size() || line[close + 2] == 'Z')
    return std::nullopt;
  ProcEntry e;
  e.pid = pid;
  e.ppid = static_cast<pid_t>(std::strtol(line.c_str() + close + 4, nullptr, 10));
  std::ifstream env(base + "/environ", std::ios::binary);
  std::string var;
  while (std::getline(env, var, '\0')) {
    if (var == entry) {
      e.marked = true;
      break;
    }
  }
  return e;
}

// The marked processes and their descendants, each with its parent.
std::map<pid_t, ProcEntry> marked_trees(const std::string& entry) {
  std::map<pid_t, std::vector<ProcEntry>> children;
  std::vector<ProcEntry> todo;
  const pid_t self = ::getpid();
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return {};
  while (dirent* d = ::readdir(proc)) {
    char* end = nullptr;
    const long pid = std::strtol(d->d_name, &end, 10);
    if (pid <= 0 || *end != '\0' || pid == self) continue;
    auto e = read_proc(static_cast<pid_t>(pid), entry);
    if (!e) continue;
    children[e->ppid].push_back(*e);
    if (e->marked) todo.push_back(*e);
  }
  ::closedir(proc);
  std::map<pid_t, ProcEntry> out;
  while (!todo.empty()) {
    const ProcEntry e = todo.back();
    todo.pop_back();
    if (!out.emplace(e.pid, e).second) continue;
    for (const ProcEntry& c : children[e.pid]) todo.push_back(c);
  }
  return out;
}

}  // namespace

std::vector<pid_t> processes_with_environment(const std::string& entry) {
  std::vector<pid_t> out;
  for (const auto& [pid, e] : marked_trees(entry)) out.push_back(pid);
  return out;
}

size_t kill_processes_with_environment(const std::string& entry) {
  // Stop them all first, looking again until a look finds none new: a stopped process forks no
  // more, and a child keeps its parent (so the tree stays whole) until the kill. Each is held by
  // a pidfd and checked again before its signal: a pid reused since the look is another process,
  // which is left alone; one reused after pidfd_open is not the pidfd's.
  std::map<pid_t, int> held;
  for (int round = 0; round < 64; ++round) {
    bool fresh = false;
    for (const auto& [pid, before] : marked_trees(entry)) {
      if (held.contains(pid)) continue;
      const int fd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
      if (fd < 0) continue;
      const auto now = read_proc(pid, entry);
      const bool same = now && (now->marked || now->ppid == before.ppid);
      if (!same || ::syscall(SYS_pidfd_send_signal, fd, SIGSTOP, nullptr, 0) != 0) {
        ::close(fd);
        continue;
      }
      held.emplace(pid, fd);
      fresh = true;
    }
    if (!fresh) break;
  }
  size_t killed = 0;
  for (const auto& [pid, fd] : held) {
    killed += ::syscall(SYS_pidfd_send_signal, fd, SIGKILL, nullptr, 0) == 0;
    ::close(fd);
  }
  return killed;
}

void signal(pid_t pid, int sig) {
  if (pid <= 0) return;
  if (::kill(-pid, sig) != 0) ::kill(pid, sig);
}

std::optional<pid_t> read_pid_file(const std::string& path) {
  std::ifstream in(path);
  long long v = 0;
  if (!(in >> v) || v <= 0) return std::nullopt;
  return static_cast<pid_t>(v);
}

Status write_pid_file(const std::string& path, pid_t pid) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << pid << "\n";
    if (!out) return internal_error("cannot write " + tmp);
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0)
    return internal_error("cannot rename " + tmp + ": " + std::strerror(errno));
  return ok_status();
}

}  // namespace gf::os
