// The README's tour, run as written: every `$ ` command of the ```console blocks under "## A
// tour" runs in order against a fresh server (the tour's own `serve` line, on a free port and a
// scratch data dir), and what the README shows under a command is what it prints. The README and
// this test cannot drift apart: change one and the other fails.
//
// Matching, so the README can show real output: each shown line must match an output line, in
// order, after runs of blanks are collapsed; `*` in a shown line matches any text (times, ids);
// a line `...` skips any number of output lines (without it, shown lines follow each other). A
// command with nothing shown under it must only succeed. A line `VAR=$(...)` defines a shell
// variable the later commands see.
#include <gtest/gtest.h>

#include <signal.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include "os/process.h"

#include "support/gpufleet_server.h"
#include "support/postgres_server.h"
#include "support/process.h"
#include "support/temp_dir.h"

namespace gf {
namespace {

using testing::GpufleetServer;
using testing::TempDir;

struct Step {
  std::string command;
  std::vector<std::string> shown;
  int line = 0;  // in README.md
};

std::string collapse(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == ' ' || c == '\t') {
      if (!out.empty() && out.back() != ' ') out += ' ';
    } else {
      out += c;
    }
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

// `*` matches any run of characters; everything else matches itself.
bool glob(std::string_view p, std::string_view t) {
  size_t pi = 0, ti = 0, star = std::string_view::npos, mark = 0;
  while (ti < t.size()) {
    if (pi < p.size() && p[pi] == '*') {
      star = pi++;
      mark = ti;
    } else if (pi < p.size() && p[pi] == t[ti]) {
      ++pi;
      ++ti;
    } else if (star != std::string_view::npos) {
      pi = star + 1;
      ti = ++mark;
    } else {
      return false;
    }
  }
  while (pi < p.size() && p[pi] == '*') ++pi;
  return pi == p.size();
}

// Whether `shown` appears in `out` as the matching rules say; "" or the first shown line that
// did not match.
std::string mismatch(const std::vector<std::string>& shown, const std::string& out) {
  std::vector<std::string> lines;
  std::istringstream in(out);
  for (std::string l; std::getline(in, l);) lines.push_back(collapse(l));
  size_t at = 0;
  bool skipping = true;  // the first shown line may come anywhere
  for (const std::string& s : shown) {
    if (collapse(s) == "...") {
      skipping = true;
      continue;
    }
    const std::string want = collapse(s);
    bool found = false;
    while (at < lines.size()) {
      if (glob(want, lines[at++])) {
        found = true;
        break;
      }
      if (!skipping) return s;
    }
    if (!found) return s;
    skipping = false;
  }
  return "";
}

// The steps of the README section whose heading is `heading` (a whole line).
std::vector<Step> tour_steps(const std::string& readme, const std::string& heading) {
  std::vector<Step> steps;
  std::istringstream in(readme);
  bool in_tour = false, in_block = false;
  int n = 0;
  for (std::string line; std::getline(in, line);) {
    ++n;
    if (line.rfind("## ", 0) == 0) in_tour = line == heading;
    if (!in_tour) continue;
    if (line.rfind("```", 0) == 0) {
      in_block = !in_block && line == "```console";
      continue;
    }
    if (!in_block) continue;
    if (line.rfind("$ ", 0) == 0) {
      steps.push_back(Step{line.substr(2), {}, n});
    } else if (!steps.empty()) {
      steps.back().shown.push_back(line);
    }
  }
  return steps;
}

// The command with the README's `build/gpufleet` pointing at the binary under test.
std::string with_binary(std::string cmd) {
  static const std::regex kBin(R"((^|[\s(|;&])build/gpufleet\b)");
  return std::regex_replace(cmd, kBin, std::string("$1") + GPUFLEET_BINARY);
}

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// Runs the tour under `heading`: its first step starts the server, every later one must answer as
// the README shows.
void run_tour(const std::string& heading, size_t min_steps) {
  std::ifstream f(std::string(GPUFLEET_SOURCE_DIR) + "/README.md");
  std::stringstream ss;
  ss << f.rdbuf();
  const std::vector<Step> steps = tour_steps(ss.str(), heading);
  ASSERT_GE(steps.size(), min_steps)
      << "README.md has no \"" << heading << "\" with ```console blocks";

  // The first step starts the tour's server: its flags, on a free port and a scratch data dir.
  std::istringstream words(steps[0].command);
  std::vector<std::string> args;
  for (std::string w; words >> w;) args.push_back(w);
  ASSERT_GE(args.size(), 2u);
  ASSERT_EQ(args[0], "build/gpufleet") << steps[0].command;
  ASSERT_EQ(args[1], "serve") << "the tour starts with its server: " << steps[0].command;
  std::vector<std::string> flags;
  for (size_t i = 2; i < args.size(); ++i) {
    if (args[i] == "&") continue;
    if (args[i] == "--data-dir") {
      ++i;
      continue;
    }
    flags.push_back(args[i]);
  }
  TempDir dir;
  const std::string src = GPUFLEET_SOURCE_DIR;
  // Relative paths in the flags (examples/…, or after an `=`) are the repository's.
  for (std::string& fl : flags) {
    fl = std::regex_replace(fl, std::regex("(^|=)examples/"), "$1" + src + "/examples/");
  }
  GpufleetServer server(dir.file("data"), flags);
  ASSERT_FALSE(server.url().empty()) << server.process().output();

  std::string preamble = "set -o pipefail; cd " + shell_quote(src) +
                         "; export GPUFLEET_SERVER=" + shell_quote(server.url()) + "; ";
  static const std::regex kAssignment(R"(^(export )?[A-Za-z_][A-Za-z0-9_]*=)");
  for (size_t i = 1; i < steps.size(); ++i) {
    const Step& s = steps[i];
    const std::string cmd = with_binary(s.command);
    testing::CommandResult r = testing::run_command({"bash", "-c", preamble + cmd});
    // A pod's log is written by a real process: `logs` right after the pod started may come
    // before its first line (as kubectl's would). Read again, a bounded number of times.
    for (int again = 0; again < 200 && s.command.starts_with("build/gpufleet logs ") &&
                        r.exit_code == 0 && !mismatch(s.shown, r.out).empty();
         ++again) {
      r = testing::run_command({"bash", "-c", preamble + cmd});
    }
    EXPECT_EQ(r.exit_code, 0) << "README.md:" << s.line << ": $ " << s.command << "\n" << r.out;
    const std::string bad = mismatch(s.shown, r.out);
    EXPECT_EQ(bad, "") << "README.md:" << s.line << ": $ " << s.command
                       << "\nthe README shows a line the command did not print:\n  " << bad
                       << "\nit printed:\n"
                       << r.out;
    if (std::regex_search(s.command, kAssignment)) preamble += cmd + "; ";
  }
  server.process().signal(SIGKILL);
  server.process().wait();
  // The local cloud's agents outlive serve by design: stop those the tour started.
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir.file("data/local"), ec)) {
    const std::string id = e.path().filename().string();
    auto pid = os::read_pid_file((e.path() / "agent.pid").string());
    if (pid && os::alive(*pid, id)) os::signal(*pid, SIGKILL);
  }
}

TEST(ReadmeTour, EveryCommandAnswersAsTheReadmeShows) { run_tour("## A tour", 10); }

TEST(ReadmeTour, RealProcessesTourAnswersAsTheReadmeShows) {
  run_tour("## A tour of real processes", 5);
}

TEST(ReadmeTour, RealSlurmTourAnswersAsTheReadmeShows) {
  if (!std::filesystem::exists("/usr/sbin/slurmctld"))
    GTEST_SKIP() << "Slurm is not installed (scripts/setup installs it)";
  run_tour("## A real Slurm cluster", 4);
}

// The replicas tour: a real PostgreSQL (scripts/postgres) and two serve processes in the
// background, on free ports instead of the README's.
TEST(ReadmeTour, TwoReplicasTourAnswersAsTheReadmeShows) {
  if (!std::filesystem::exists(testing::kPostgresBin + "/initdb"))
    GTEST_SKIP() << "PostgreSQL is not installed (scripts/setup installs it)";
  std::ifstream f(std::string(GPUFLEET_SOURCE_DIR) + "/README.md");
  std::stringstream ss;
  ss << f.rdbuf();
  const std::vector<Step> steps = tour_steps(ss.str(), "## Two replicas on one database");
  ASSERT_EQ(steps.size(), 4u) << "the README promises four commands";
  TempDir dir;
  // As root, PostgreSQL runs as the postgres user, who must be able to reach the directory.
  std::filesystem::permissions(dir.path(), std::filesystem::perms::owner_all |
                                               std::filesystem::perms::group_exec |
                                               std::filesystem::perms::others_exec);
  const std::string pg_dir = dir.file("pg");
  const std::map<std::string, std::string> swap = {
      {"55432", std::to_string(testing::free_tcp_port())},
      {"8470", std::to_string(testing::free_tcp_port())},
      {"8471", std::to_string(testing::free_tcp_port())},
      {"/tmp/gpufleet-pg", pg_dir}};
  auto local = [&](std::string text) {
    for (const auto& [from, to] : swap) {
      for (size_t at = text.find(from); at != std::string::npos;
           at = text.find(from, at + to.size()))
        text.replace(at, from.size(), to);
    }
    return text;
  };
  const std::string src = GPUFLEET_SOURCE_DIR;
  std::vector<std::unique_ptr<testing::Process>> servers;
  for (const Step& s : steps) {
    std::string cmd = local(with_binary(s.command));
    std::vector<std::string> shown;
    for (const std::string& line : s.shown) shown.push_back(local(line));
    if (cmd.ends_with(" &")) {  // a server: started in the background, waited for by its banner
      std::istringstream words(cmd.substr(0, cmd.size() - 2));
      std::vector<std::string> args;
      for (std::string w; words >> w;) args.push_back(w);
      servers.push_back(std::make_unique<testing::Process>(args));
      EXPECT_NE(servers.back()->wait_for_line("serving on http"), "")
          << "README.md:" << s.line << ": " << servers.back()->output();
      continue;
    }
    const testing::CommandResult r =
        testing::run_command({"bash", "-c", "cd " + shell_quote(src) + "; " + cmd});
    EXPECT_EQ(r.exit_code, 0) << "README.md:" << s.line << ": $ " << s.command << "\n" << r.out;
    EXPECT_EQ(mismatch(shown, r.out), "")
        << "README.md:" << s.line << ": $ " << s.command << "\nit printed:\n"
        << r.out;
  }
  servers.clear();
  testing::run_command({src + "/scripts/postgres", "stop", pg_dir});
}

TEST(ReadmeTour, TheMatcherFollowsItsRules) {
  EXPECT_EQ(mismatch({"a  b", "c*"}, "x\na b\ncde\n"), "");
  EXPECT_EQ(mismatch({"a", "c"}, "a\nb\nc\n"), "c");  // shown lines follow each other
  EXPECT_EQ(mismatch({"a", "...", "c"}, "a\nb\nc\n"), "");
  EXPECT_EQ(mismatch({"zz"}, "a\n"), "zz");
  EXPECT_TRUE(glob("*/abc*", "arn:x/abc123"));
  EXPECT_FALSE(glob("a*c", "abd"));
}

}  // namespace
}  // namespace gf
