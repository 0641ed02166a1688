// docs/architecture.md "Folders": each folder under src/ includes only itself and the folders
// below it in this table. The table here is the one the doc prints; a new folder or a new
// dependency is a change to both.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

namespace gf {
namespace {

namespace fs = std::filesystem;

// Folder -> the folders it may include (besides itself).
const std::map<std::string, std::set<std::string>>& allowed() {
  static const std::map<std::string, std::set<std::string>> table = {
      {"core", {}},
      {"model", {"core"}},
      {"quota", {"core"}},
      {"quota/frontends", {"core", "model", "quota"}},
      {"journal", {"core"}},
      {"journal/sqlite", {"core", "journal"}},
      {"journal/postgres", {"core", "journal"}},
      {"health", {"core", "model"}},
      {"state", {"core", "model", "journal"}},
      {"loop", {"core", "model", "journal", "state"}},
      {"workload", {"core", "model", "quota/frontends"}},
      {"schedule", {"core", "model", "quota", "quota/frontends", "state", "loop", "workload"}},
      {"provision", {"core", "model", "state", "loop", "orchestrator/slurm"}},
      {"orchestrator", {"core", "model"}},
      {"orchestrator/slurm", {"core", "os"}},
      {"cloud", {"core", "model", "state", "loop"}},
      {"cloud/sim", {"core", "model", "state", "loop", "cloud"}},
      {"cloud/local", {"core", "model", "state", "loop", "cloud", "os", "orchestrator/slurm"}},
      {"os", {"core"}},
      {"remediate", {"core", "model", "health", "state", "loop"}},
      {"notify", {"core", "model", "state", "loop"}},
      {"retention", {"core", "model", "state", "loop"}},
      {"client", {"core"}},
      {"agent", {"core", "model", "health", "client", "os", "orchestrator/slurm"}},
      {"console", {}},
      {"api",
       {"core", "model", "quota", "quota/frontends", "state", "loop", "workload", "provision",
        "remediate", "health", "orchestrator/slurm", "console"}},
      // The AWS doors sit on the API (its handlers and router); the API never includes them.
      {"api/aws", {"core", "api"}},
      // So is the Kubernetes door (it reads the instance catalog for a Node's GPUs).
      {"api/k8s", {"core", "model", "api"}},
      {"runtime",
       {"core", "model", "quota", "quota/frontends", "journal", "journal/sqlite", "health", "state",
        "loop", "workload", "schedule", "provision", "cloud", "remediate", "notify", "api",
        "orchestrator/slurm", "retention"}},
      {"sim",
       {"core",
        "model",
        "quota",
        "quota/frontends",
        "journal",
        "journal/sqlite",
        "health",
        "state",
        "loop",
        "workload",
        "schedule",
        "provision",
        "cloud",
        "cloud/sim",
        "remediate",
        "notify",
        "api",
        "runtime",
        "orchestrator/slurm",
        "retention"}},
      {"replica", {"core", "journal", "journal/postgres", "api"}},
      {"cli",
       {"core",
        "model",
        "quota",
        "quota/frontends",
        "journal",
        "journal/sqlite",
        "health",
        "state",
        "loop",
        "workload",
        "schedule",
        "provision",
        "cloud",
        "cloud/sim",
        "cloud/local",
        "remediate",
        "notify",
        "api",
        "runtime",
        "sim",
        "agent",
        "client",
        "os",
        "orchestrator/slurm",
        "journal/postgres",
        "replica",
        "retention"}},
      {"", {"cli"}},  // src/main.cpp
  };
  return table;
}

// The folder of "a/b/c.h": the longest folder of the table it lies in.
std::string folder_of(const std::string& path) {
  std::string best;
  bool found = false;
  for (const auto& [folder, deps] : allowed()) {
    if (folder.empty()) continue;
    if (path.rfind(folder + "/", 0) == 0 && folder.size() >= best.size()) {
      best = folder;
      found = true;
    }
  }
  return found ? best : (path.find('/') == std::string::npos ? "" : "?" + path);
}

struct Offence {
  std::string file;
  int line;
  std::string include;
};

// Every project include ("dir/file.h") of the files under `src` that the table does not allow.
std::vector<Offence> offences(const fs::path& src, size_t* files) {
  static const std::regex include(R"re(^\s*#\s*include\s+"([^"]+)")re");
  std::vector<Offence> out;
  for (const auto& entry : fs::recursive_directory_iterator(src)) {
    if (!entry.is_regular_file()) continue;
    const auto ext = entry.path().extension();
    if (ext != ".cpp" && ext != ".h") continue;
    ++*files;
    const std::string rel = fs::relative(entry.path(), src).generic_string();
    const std::string from = folder_of(rel);
    auto rule = allowed().find(from);
    std::ifstream in(entry.path());
    std::string line;
    int n = 0;
    while (std::getline(in, line)) {
      ++n;
      std::smatch m;
      if (!std::regex_search(line, m, include)) continue;
      const std::string to = folder_of(m[1].str());
      if (to == from) continue;
      if (rule == allowed().end() || !rule->second.contains(to)) out.push_back({rel, n, m[1]});
    }
  }
  return out;
}

TEST(Layering, EveryFolderIncludesOnlyTheFoldersTheArchitectureTableAllows) {
  const fs::path src = fs::path(GPUFLEET_SOURCE_DIR) / "src";
  ASSERT_TRUE(fs::exists(src));
  size_t files = 0;
  const std::vector<Offence> found = offences(src, &files);
  EXPECT_GT(files, 100u);
  std::ostringstream msg;
  for (const Offence& o : found)
    msg << "  " << o.file << ":" << o.line << " includes " << o.include << "\n";
  EXPECT_TRUE(found.empty()) << "includes the table in docs/architecture.md forbids:\n"
                             << msg.str();
}

TEST(Layering, EveryFolderUnderSrcIsInTheTable) {
  const fs::path src = fs::path(GPUFLEET_SOURCE_DIR) / "src";
  std::vector<std::string> unknown;
  for (const auto& entry : fs::recursive_directory_iterator(src)) {
    if (!entry.is_directory()) continue;
    const std::string rel = fs::relative(entry.path(), src).generic_string();
    if (!allowed().contains(rel) && !allowed().contains(rel.substr(0, rel.rfind('/'))))
      unknown.push_back(rel);
  }
  EXPECT_TRUE(unknown.empty()) << "a folder the layering table does not know: " << unknown.front();
}

TEST(Layering, TheStateDependsOnDataOnly) {
  // Rule of docs/architecture.md: the state holds data; no controller, scheduler or front end.
  EXPECT_EQ(allowed().at("state"), (std::set<std::string>{"core", "model", "journal"}));
  for (const char* gone : {"sched", "dispatch", "healing", "frontend"}) {
    EXPECT_FALSE(fs::exists(fs::path(GPUFLEET_SOURCE_DIR) / "src" / gone)) << gone;
  }
}

TEST(Layering, TheCheckCatchesAForbiddenInclude) {
  // The check itself: a state file that includes the scheduler is an offence.
  const fs::path dir = fs::temp_directory_path() / "gf_layering_selfcheck";
  fs::remove_all(dir);
  fs::create_directories(dir / "state");
  fs::create_directories(dir / "schedule");
  std::ofstream(dir / "state" / "bad.cpp") << "#include \"schedule/scheduler.h\"\n"
                                              "#include \"model/job.h\"\n";
  std::ofstream(dir / "schedule" / "ok.cpp") << "#include \"state/fleet_state.h\"\n";
  size_t files = 0;
  const std::vector<Offence> found = offences(dir, &files);
  fs::remove_all(dir);
  EXPECT_EQ(files, 2u);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].file, "state/bad.cpp");
  EXPECT_EQ(found[0].include, "schedule/scheduler.h");
}

}  // namespace
}  // namespace gf
