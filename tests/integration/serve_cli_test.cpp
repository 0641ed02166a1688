// The real `gpufleet` binary: serve on a free port, drive it with the real CLI and raw HTTP,
// stop it with SIGTERM and with SIGKILL, and check nothing acknowledged is lost.
#include <gtest/gtest.h>
#include <httplib.h>

#include <filesystem>
#include <regex>

#include "core/json.h"
#include "support/gpufleet_server.h"
#include "support/process.h"
#include "support/temp_dir.h"

namespace gf {
namespace {

using testing::CommandResult;
using testing::Process;
using testing::run_command;
using testing::TempDir;

using Server = testing::GpufleetServer;

Json events_json(const Server& s) {
  CommandResult r = s.cli({"-o", "json", "events", "--all"});
  EXPECT_EQ(r.exit_code, 0) << r.out;
  auto j = parse_json(r.out);
  EXPECT_TRUE(j.ok()) << r.out;
  return j.ok() ? *j : Json::object();
}

int count_descriptions(const Json& events, const std::string& prefix) {
  int n = 0;
  for (const auto& e : events["Events"]) {
    if (e["Description"].get<std::string>().rfind(prefix, 0) == 0) ++n;
  }
  return n;
}

TEST(ServeIntegration, ServePrintsWhereToReachItAndAnswersHealthz) {
  TempDir dir;
  Server s(dir.path());
  ASSERT_FALSE(s.url().empty()) << s.process().output();
  httplib::Client c(s.url());
  auto res = c.Get("/healthz");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->body, "ok\n");
}

TEST(ServeIntegration, CliListsEventsAsTableJsonAndYaml) {
  TempDir dir;
  Server s(dir.path());
  CommandResult table = s.cli({"events"});
  EXPECT_EQ(table.exit_code, 0) << table.out;
  EXPECT_NE(table.out.find("TIME"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("ControlPlane"), std::string::npos) << table.out;
  Json j = events_json(s);
  ASSERT_EQ(j["Events"].size(), 1u);
  EXPECT_EQ(j["Events"][0]["ResourceType"], "ControlPlane");
  CommandResult yaml = s.cli({"-o", "yaml", "events"});
  EXPECT_EQ(yaml.exit_code, 0);
  EXPECT_NE(yaml.out.find("ResourceType: ControlPlane"), std::string::npos) << yaml.out;
  CommandResult version = s.cli({"version"});
  EXPECT_NE(version.out.find("server: gpufleet"), std::string::npos) << version.out;
}

TEST(ServeIntegration, ErrorsOverHttpKeepTheJsonShape) {
  TempDir dir;
  Server s(dir.path(), {"--max-body-bytes", "1000"});
  httplib::Client c(s.url());
  auto missing = c.Get("/v1/no-such-thing");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
  EXPECT_EQ(Json::parse(missing->body)["__type"], "ResourceNotFound");
  auto method = c.Put("/v1/events", "{}", "application/json");
  ASSERT_TRUE(method);
  EXPECT_EQ(method->status, 405);
  EXPECT_EQ(Json::parse(method->body)["__type"], "MethodNotAllowedException");
  for (size_t size : {1500, 100000}) {
    auto big = c.Post("/v1/events", std::string(size, 'x'), "application/json");
    ASSERT_TRUE(big);
    EXPECT_EQ(big->status, 413) << size;
    EXPECT_EQ(Json::parse(big->body)["__type"], "PayloadTooLargeException") << big->body;
  }
  auto bad = c.Get("/v1/events?MaxResults=abc");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 400);
  EXPECT_EQ(Json::parse(bad->body)["__type"], "ValidationException");
}

TEST(ServeIntegration, SigtermStopsGracefullyAndRestartKeepsHistory) {
  TempDir dir;
  {
    Server s(dir.path());
    ASSERT_FALSE(s.url().empty());
    s.process().signal(SIGTERM);
    EXPECT_EQ(s.process().wait(), 0);
    EXPECT_NE(s.process().read_rest().find("gpufleet stopped"), std::string::npos);
  }
  Server again(dir.path());
  Json j = events_json(again);
  EXPECT_EQ(count_descriptions(j, "gpufleet 0"), 2) << j.dump(2);
  EXPECT_EQ(count_descriptions(j, "gpufleet stopped: signal"), 1) << j.dump(2);
}

TEST(ServeIntegration, Kill9LosesNothingAcknowledged) {
  TempDir dir;
  for (int round = 0; round < 3; ++round) {
    Server s(dir.path());
    ASSERT_FALSE(s.url().empty());
    // The start event is acknowledged before serve prints its address.
    Json j = events_json(s);
    EXPECT_EQ(count_descriptions(j, "gpufleet 0"), round + 1);
    s.process().signal(SIGKILL);
    EXPECT_EQ(s.process().wait(), 128 + SIGKILL);
  }
}

TEST(ServeIntegration, ASecondServeOnTheSameDataDirIsRefused) {
  TempDir dir;
  Server first(dir.path());
  ASSERT_FALSE(first.url().empty());
  CommandResult second =
      run_command({GPUFLEET_BINARY, "serve", "--data-dir", dir.path(), "--listen", "127.0.0.1:0"});
  EXPECT_NE(second.exit_code, 0);
  EXPECT_NE(second.out.find("in use by another gpufleet serve"), std::string::npos) << second.out;
}

// Two servers never share a port (no SO_REUSEPORT): the second fails at startup, naming it.
TEST(ServeIntegration, ASecondServeOnABusyPortFailsAtStartup) {
  TempDir a;
  TempDir b;
  Server first(a.path());
  ASSERT_GT(first.port(), 0);
  const std::string listen = "127.0.0.1:" + std::to_string(first.port());
  CommandResult second =
      run_command({GPUFLEET_BINARY, "serve", "--data-dir", b.path(), "--listen", listen});
  EXPECT_NE(second.exit_code, 0);
  EXPECT_NE(second.out.find("cannot listen on " + listen), std::string::npos) << second.out;
  EXPECT_NE(second.out.find("is another gpufleet serve running there?"), std::string::npos)
      << second.out;
  EXPECT_EQ(count_descriptions(events_json(first), "gpufleet 0"), 1) << "the first still answers";
}

// `make demo` starts from a fresh data directory, but never deletes one a live server holds.
TEST(ServeIntegration, TheDemoRefusesADataDirALiveServerHolds) {
  TempDir dir;
  Server live(dir.path());
  ASSERT_FALSE(live.url().empty());
  CommandResult demo =
      run_command({"env", "GPUFLEET_DATA=" + dir.path(), "GPUFLEET_LISTEN=127.0.0.1:1",
                   std::string(GPUFLEET_SOURCE_DIR) + "/scripts/demo", GPUFLEET_BINARY});
  EXPECT_EQ(demo.exit_code, 1) << demo.out;
  EXPECT_NE(demo.out.find("is in use by a running gpufleet serve"), std::string::npos) << demo.out;
  EXPECT_TRUE(std::filesystem::exists(dir.path() + "/LOCK"));
  EXPECT_EQ(count_descriptions(events_json(live), "gpufleet 0"), 1) << "its journal is intact";
}

// A word that is no command says so and lists what exists there (it answered "A subcommand is
// required"); a command given none of its subcommands lists them.
TEST(CliIntegration, UnknownCommandNamesTheWordAndListsTheCommandsThere) {
  CommandResult r = run_command({GPUFLEET_BINARY, "describe", "clusterz", "X"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("unknown command \"clusterz\" for \"gpufleet describe\"; the commands are: "
                       "job, pytorchjob"),
            std::string::npos)
      << r.out;
  r = run_command({GPUFLEET_BINARY, "-o", "json", "logz", "x"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("unknown command \"logz\" for \"gpufleet\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("cluster, node"), std::string::npos) << r.out;
  r = run_command({GPUFLEET_BINARY, "alert", "explain", "a-1"});
  EXPECT_NE(r.out.find("unknown command \"explain\" for \"gpufleet alert\"; the commands are: "
                       "list, get"),
            std::string::npos)
      << r.out;
  r = run_command({GPUFLEET_BINARY, "cluster"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("\"gpufleet cluster\" needs a command: create,"), std::string::npos)
      << r.out;
  // Other parse errors keep their own message.
  r = run_command({GPUFLEET_BINARY, "cluster", "create"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.out.find("--file is required"), std::string::npos) << r.out;
}

TEST(CliIntegration, UnreachableServerAndBadFlagsFailWithAClearMessage) {
  CommandResult r = run_command({GPUFLEET_BINARY, "--server", "http://127.0.0.1:1", "events"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.out.find("cannot reach gpufleet at http://127.0.0.1:1"), std::string::npos) << r.out;
  CommandResult fmt = run_command({GPUFLEET_BINARY, "-o", "xml", "events"});
  EXPECT_NE(fmt.exit_code, 0);
  EXPECT_NE(fmt.out.find("-o: expected table, wide, json, yaml"), std::string::npos) << fmt.out;
  CommandResult listen = run_command({GPUFLEET_BINARY, "serve", "--listen", "nowhere"});
  EXPECT_NE(listen.exit_code, 0);
  EXPECT_NE(listen.out.find("--listen"), std::string::npos) << listen.out;
  CommandResult none = run_command({GPUFLEET_BINARY});
  EXPECT_NE(none.exit_code, 0);
}

}  // namespace
}  // namespace gf
