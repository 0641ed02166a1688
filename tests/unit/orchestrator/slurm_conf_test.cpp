#include "orchestrator/slurm/slurm_conf.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

namespace gf {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A user's slurm.conf with the things merge mode must not touch: comments, blank lines, a
// tab-indented comment, trailing blanks, a hand-written node and partition, an Include line.
constexpr std::string_view kUserConf =
    "# slurm.conf for the research cluster\n"
    "# Owned by the platform team; gpufleet rewrites only its marked blocks.\n"
    "ClusterName=research\n"
    "SlurmctldHost=ctl-0(10.0.0.10)\n"
    "SlurmctldPort=6817\n"
    "AuthType=auth/munge\n"
    "GresTypes=gpu\n"
    "SelectType=select/cons_tres\n"
    "SelectTypeParameters=CR_Core_Memory\n"
    "\t# power saving, tuned by hand\n"
    "SuspendTime=600   \n"
    "ResumeProgram=/opt/gpufleet/resume.sh\n"
    "\n"
    "NodeName=DEFAULT State=UNKNOWN\n"
    "NodeName=login1 CPUs=8 RealMemory=30000\n"
    "PartitionName=debug Nodes=login1 Default=NO MaxTime=30 State=UP\n"
    "Include /etc/slurm/site-extra.conf\n";

std::string crlf(std::string_view lf) {
  std::string out;
  for (char c : lf) {
    if (c == '\n') out += '\r';
    out += c;
  }
  return out;
}

std::string without_final_newline(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  return s;
}

// Removes each managed block, from its BEGIN line through its END line and that line's
// terminator. Written independently of the implementation's scanner.
std::string strip_managed_blocks(std::string text) {
  for (auto [begin, end] : {std::pair(kSlurmNodesBegin, kSlurmNodesEnd),
                            std::pair(kSlurmPartitionsBegin, kSlurmPartitionsEnd)}) {
    const size_t from = text.find(begin);
    if (from == std::string::npos) continue;
    const size_t end_marker = text.find(end, from);
    if (end_marker == std::string::npos) continue;
    const size_t nl = text.find('\n', end_marker);
    text.erase(from, (nl == std::string::npos ? text.size() : nl + 1) - from);
  }
  return text;
}

// The lines strictly between a block's markers, without their terminators.
std::vector<std::string> block_lines(const std::string& text, std::string_view begin,
                                     std::string_view end) {
  std::vector<std::string> out;
  const size_t from = text.find(begin);
  const size_t to = text.find(end, from);
  if (from == std::string::npos || to == std::string::npos) return out;
  size_t pos = text.find('\n', from) + 1;
  while (pos < to) {
    const size_t nl = text.find('\n', pos);
    std::string line = text.substr(pos, nl - pos);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    out.push_back(line);
    pos = nl + 1;
  }
  return out;
}

std::vector<std::string> node_lines(const std::string& text) {
  return block_lines(text, kSlurmNodesBegin, kSlurmNodesEnd);
}
std::vector<std::string> partition_lines(const std::string& text) {
  return block_lines(text, kSlurmPartitionsBegin, kSlurmPartitionsEnd);
}

// A cluster of `n` p5 workers in partition "gpu"; the even ones also in "train".
SlurmLayout workers(int n) {
  SlurmLayout layout;
  SlurmPartitionLine gpu{"gpu", {}};
  SlurmPartitionLine train{"train", {}};
  for (int i = 1; i <= n; ++i) {
    const std::string name = "worker-" + std::to_string(i);
    layout.nodes.push_back({name, 192, 2'000'000, 8, "p5"});
    gpu.nodes.push_back(name);
    if (i % 2 == 0) train.nodes.push_back(name);
  }
  layout.partitions = {train, gpu};  // unsorted on purpose
  return layout;
}

SlurmMergeResult merge(std::string_view existing, const SlurmLayout& layout) {
  return merge_slurm_conf(existing, layout);
}

struct Variant {
  const char* label;
  std::string original;
  std::string expected_outside;  // what is left after stripping the blocks
};

std::vector<Variant> variants() {
  const std::string lf(kUserConf);
  return {
      {"lf", lf, lf},
      {"crlf", crlf(lf), crlf(lf)},
      // The one byte merge adds: the newline that separates the last user line from the blocks.
      {"no final newline", without_final_newline(lf), lf},
      {"crlf, no final newline", without_final_newline(crlf(lf)), crlf(lf)},
  };
}

TEST(SlurmConf, PreservesEveryByteOutsideTheBlocksWhileNodesJoinAndLeave) {
  for (const Variant& v : variants()) {
    SCOPED_TRACE(v.label);
    std::string text = v.original;
    for (int n : {1, 10, 16, 3}) {
      SCOPED_TRACE(n);
      SlurmMergeResult r = merge(text, workers(n));
      EXPECT_TRUE(r.warnings.empty()) << r.warnings.front();
      text = r.text;
      EXPECT_EQ(strip_managed_blocks(text), v.expected_outside);
      EXPECT_EQ(node_lines(text).size(), static_cast<size_t>(n));
    }
  }
}

TEST(SlurmConf, BlocksListExactlyTheClusterNodesAndPartitions) {
  std::string text(kUserConf);
  text = merge(text, workers(16)).text;
  text = merge(text, workers(3)).text;
  EXPECT_THAT(node_lines(text),
              ElementsAre("NodeName=worker-1 CPUs=192 RealMemory=2000000 Gres=gpu:8 Feature=p5 "
                          "State=CLOUD",
                          "NodeName=worker-2 CPUs=192 RealMemory=2000000 Gres=gpu:8 Feature=p5 "
                          "State=CLOUD",
                          "NodeName=worker-3 CPUs=192 RealMemory=2000000 Gres=gpu:8 Feature=p5 "
                          "State=CLOUD"));
  EXPECT_THAT(partition_lines(text), ElementsAre("PartitionName=gpu Nodes=worker-[1-3]",
                                                 "PartitionName=train Nodes=worker-2"));
}

TEST(SlurmConf, AppendsBothBlocksAtTheEndWhenAbsent) {
  const std::string text = merge(kUserConf, workers(2)).text;
  EXPECT_EQ(text.substr(0, kUserConf.size()), kUserConf);
  EXPECT_EQ(text.substr(kUserConf.size()),
            "# BEGIN gpufleet managed nodes -- edits inside this block are overwritten\n"
            "NodeName=worker-1 CPUs=192 RealMemory=2000000 Gres=gpu:8 Feature=p5 State=CLOUD\n"
            "NodeName=worker-2 CPUs=192 RealMemory=2000000 Gres=gpu:8 Feature=p5 State=CLOUD\n"
            "# END gpufleet managed nodes\n"
            "# BEGIN gpufleet managed partitions -- edits inside this block are overwritten\n"
            "PartitionName=gpu Nodes=worker-[1-2]\n"
            "PartitionName=train Nodes=worker-2\n"
            "# END gpufleet managed partitions\n");
}

TEST(SlurmConf, AppendAddsANewlineOnlyWhenTheFileLacksOne) {
  EXPECT_EQ(merge("A=1", {}).text.rfind("A=1\n# BEGIN", 0), 0u);
  EXPECT_EQ(merge("A=1\n", {}).text.rfind("A=1\n# BEGIN", 0), 0u);
  EXPECT_EQ(merge("A=1\r\n", {}).text.rfind("A=1\r\n# BEGIN", 0), 0u);
  EXPECT_EQ(merge("A=1\n\n", {}).text.rfind("A=1\n\n# BEGIN", 0), 0u);
}

TEST(SlurmConf, EmptyFileGetsJustTheBlocks) {
  EXPECT_EQ(merge("", {}).text,
            "# BEGIN gpufleet managed nodes -- edits inside this block are overwritten\n"
            "# END gpufleet managed nodes\n"
            "# BEGIN gpufleet managed partitions -- edits inside this block are overwritten\n"
            "# END gpufleet managed partitions\n");
}

TEST(SlurmConf, MergingTwiceIsIdempotent) {
  for (const Variant& v : variants()) {
    SCOPED_TRACE(v.label);
    for (int n : {0, 1, 10}) {
      const std::string once = merge(v.original, workers(n)).text;
      EXPECT_EQ(merge(once, workers(n)).text, once);
    }
  }
}

TEST(SlurmConf, CrlfFileGetsCrlfManagedLines) {
  const std::string text = merge(crlf(kUserConf), workers(4)).text;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\n') {
      ASSERT_TRUE(i > 0 && text[i - 1] == '\r') << "bare LF at byte " << i;
    }
  }
}

TEST(SlurmConf, ExistingBlocksAreRewrittenInPlaceAndHandEditsInsideAreOverwritten) {
  const std::string before = "ClusterName=x\n";
  const std::string after = "# tail comment\nSuspendTime=60";  // no final newline, kept so
  std::string text = before + merge("", workers(2)).text + after;
  // A user edits inside the managed block; the next merge overwrites it.
  const size_t at = text.find("NodeName=worker-1");
  text.insert(at, "NodeName=sneaky CPUs=1\n");
  const std::string merged = merge(text, workers(3)).text;
  EXPECT_EQ(merged.rfind(before + std::string(kSlurmNodesBegin), 0), 0u);
  EXPECT_EQ(merged.substr(merged.size() - after.size()), after);
  EXPECT_EQ(merged.find("sneaky"), std::string::npos);
  EXPECT_EQ(node_lines(merged).size(), 3u);
  EXPECT_EQ(strip_managed_blocks(merged), before + after);
}

TEST(SlurmConf, EndMarkerAtEndOfFileKeepsItsMissingNewline) {
  const std::string text = without_final_newline(merge("A=1\n", workers(1)).text);
  const std::string merged = merge(text, workers(2)).text;
  EXPECT_EQ(merged.substr(merged.size() - kSlurmPartitionsEnd.size()), kSlurmPartitionsEnd);
  EXPECT_EQ(merge(merged, workers(2)).text, merged);
}

TEST(SlurmConf, OnlyTheMissingBlockIsAppended) {
  std::string text =
      "A=1\n" + std::string(kSlurmNodesBegin) + "\n" + std::string(kSlurmNodesEnd) + "\nB=2\n";
  const std::string merged = merge(text, workers(1)).text;
  EXPECT_EQ(merged.rfind("A=1\n# BEGIN gpufleet managed nodes -- edits", 0), 0u);
  EXPECT_NE(merged.find("# END gpufleet managed nodes\nB=2\n# BEGIN gpufleet managed partitions"),
            std::string::npos);
}

TEST(SlurmConf, NodeLineOmitsGresWithoutGpusAndFeatureWhenEmpty) {
  SlurmLayout layout;
  layout.nodes = {{"ctl-1", 4, 15000, 0, ""}, {"gpu-1", 8, 30000, 1, "a10g,g5"}};
  EXPECT_THAT(node_lines(merge("", layout).text),
              ElementsAre("NodeName=ctl-1 CPUs=4 RealMemory=15000 State=CLOUD",
                          "NodeName=gpu-1 CPUs=8 RealMemory=30000 Gres=gpu:1 Feature=a10g,g5 "
                          "State=CLOUD"));
}

TEST(SlurmConf, NodesAreInNaturalNameOrder) {
  SlurmLayout layout;
  for (const char* name : {"worker-10", "worker-2", "login-1", "worker-1"}) {
    layout.nodes.push_back({name, 1, 1, 0, ""});
  }
  std::vector<std::string> names;
  for (const std::string& line : node_lines(merge("", layout).text)) {
    names.push_back(line.substr(0, line.find(' ')));
  }
  EXPECT_THAT(names, ElementsAre("NodeName=login-1", "NodeName=worker-1", "NodeName=worker-2",
                                 "NodeName=worker-10"));
}

TEST(SlurmConf, EmptyPartitionIsRenderedWithoutANodesKey) {
  SlurmLayout layout;
  layout.partitions = {{"gpu", {}}};
  SlurmMergeResult r = merge("", layout);
  EXPECT_TRUE(r.warnings.empty());
  EXPECT_THAT(partition_lines(r.text), ElementsAre("PartitionName=gpu"));
}

TEST(SlurmConf, HandWrittenPartitionWinsWithAWarning) {
  SlurmLayout layout = workers(2);
  layout.partitions.push_back({"debug", {"worker-1"}});
  SlurmMergeResult r = merge(kUserConf, layout);
  EXPECT_THAT(partition_lines(r.text), ElementsAre("PartitionName=gpu Nodes=worker-[1-2]",
                                                   "PartitionName=train Nodes=worker-2"));
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_THAT(r.warnings[0], HasSubstr("PartitionName=debug"));
  EXPECT_THAT(r.warnings[0], HasSubstr("line 16"));
  EXPECT_EQ(strip_managed_blocks(r.text), kUserConf);
}

TEST(SlurmConf, HandWrittenNodeWinsWithAWarningAndStaysUsableInPartitions) {
  SlurmLayout layout = workers(1);
  layout.nodes.push_back({"login1", 64, 500000, 0, ""});
  layout.partitions.push_back({"interactive", {"login1", "worker-1"}});
  SlurmMergeResult r = merge(kUserConf, layout);
  EXPECT_EQ(node_lines(r.text).size(), 1u);
  EXPECT_THAT(partition_lines(r.text), ::testing::Contains("PartitionName=interactive "
                                                           "Nodes=login1,worker-1"));
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_THAT(r.warnings[0], HasSubstr("NodeName=login1"));
  EXPECT_THAT(r.warnings[0], HasSubstr("line 15"));
}

TEST(SlurmConf, HandWrittenHostlistRangeAndLowercaseKeysConflict) {
  const std::string conf =
      "nodename = worker-[2-3] CPUs=4\npartitionname=\"train\" Nodes=worker-2\n";
  SlurmMergeResult r = merge(conf, workers(4));
  std::vector<std::string> names;
  for (const std::string& line : node_lines(r.text))
    names.push_back(line.substr(0, line.find(' ')));
  EXPECT_THAT(names, ElementsAre("NodeName=worker-1", "NodeName=worker-4"));
  EXPECT_THAT(partition_lines(r.text), ElementsAre("PartitionName=gpu Nodes=worker-[1-4]"));
  EXPECT_EQ(r.warnings.size(), 3u);
}

TEST(SlurmConf, DefaultAndCommentedLinesAreNotConflicts) {
  const std::string conf =
      "NodeName=DEFAULT CPUs=4\nPartitionName=DEFAULT MaxTime=10\n#PartitionName=gpu Nodes=x\n"
      "  # NodeName=worker-1\nSuspendTime=60 # NodeName=worker-2\n";
  SlurmMergeResult r = merge(conf, workers(2));
  EXPECT_TRUE(r.warnings.empty()) << r.warnings.front();
  EXPECT_EQ(node_lines(r.text).size(), 2u);
  EXPECT_EQ(partition_lines(r.text).size(), 2u);
}

TEST(SlurmConf, UndefinedPartitionNodeIsLeftOutWithAWarning) {
  SlurmLayout layout = workers(1);
  layout.partitions = {{"gpu", {"worker-1", "ghost-7"}}};
  SlurmMergeResult r = merge("", layout);
  EXPECT_THAT(partition_lines(r.text), ElementsAre("PartitionName=gpu Nodes=worker-1"));
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_THAT(r.warnings[0], HasSubstr("ghost-7"));
}

TEST(SlurmConf, UnwritableNamesAreSkippedAndDuplicatesHandled) {
  SlurmLayout layout;
  layout.nodes = {{"bad name", 1, 1, 0, ""},
                  {"DEFAULT", 1, 1, 0, ""},
                  {"n1", 1, 1, 0, ""},
                  {"n1", 2, 2, 0, ""},
                  {"n2", 1, 1, 0, "has space"}};
  layout.partitions = {{"p#1", {"n1"}}, {"p", {"n1"}}, {"p", {"n2"}}};
  SlurmMergeResult r = merge("", layout);
  EXPECT_THAT(node_lines(r.text), ElementsAre("NodeName=n1 CPUs=1 RealMemory=1 State=CLOUD",
                                              "NodeName=n2 CPUs=1 RealMemory=1 State=CLOUD"));
  EXPECT_THAT(partition_lines(r.text), ElementsAre("PartitionName=p Nodes=n[1-2]"));
  EXPECT_EQ(r.warnings.size(), 5u);  // two bad node names, a duplicate, features, bad partition
}

TEST(SlurmConf, MalformedBeginWithoutEndLeavesTheFileUnchanged) {
  const std::string conf = "A=1\n# BEGIN gpufleet managed nodes\nNodeName=x\n";
  SlurmMergeResult r = merge(conf, workers(2));
  EXPECT_EQ(r.text, conf);
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_THAT(r.warnings[0], HasSubstr("line 2"));
  EXPECT_THAT(r.warnings[0], HasSubstr("no matching"));
}

TEST(SlurmConf, MalformedEndWithoutBeginLeavesTheFileUnchanged) {
  const std::string conf = "A=1\r\nB=2\r\n  # END gpufleet managed partitions\r\n";
  SlurmMergeResult r = merge(conf, workers(2));
  EXPECT_EQ(r.text, conf);
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_THAT(r.warnings[0], HasSubstr("line 3"));
  EXPECT_THAT(r.warnings[0], HasSubstr("without a matching BEGIN"));
}

TEST(SlurmConf, MalformedNestedBlocksLeaveTheFileUnchanged) {
  const std::string conf = std::string(kSlurmNodesBegin) + "\n" +
                           std::string(kSlurmPartitionsBegin) + "\n" +
                           std::string(kSlurmPartitionsEnd) + "\n" + std::string(kSlurmNodesEnd);
  SlurmMergeResult r = merge(conf, workers(2));
  EXPECT_EQ(r.text, conf);
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_THAT(r.warnings[0], HasSubstr("line 2"));
  EXPECT_THAT(r.warnings[0], HasSubstr("opened at line 1"));
}

TEST(SlurmConf, MalformedMismatchedAndDuplicateBlocksLeaveTheFileUnchanged) {
  const std::string mismatched =
      std::string(kSlurmNodesBegin) + "\n" + std::string(kSlurmPartitionsEnd) + "\n";
  SlurmMergeResult r = merge(mismatched, workers(1));
  EXPECT_EQ(r.text, mismatched);
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_THAT(r.warnings[0], HasSubstr("line 2"));

  const std::string twice = merge("", workers(1)).text + "X=1\n" + merge("", workers(1)).text;
  r = merge(twice, workers(1));
  EXPECT_EQ(r.text, twice);
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_THAT(r.warnings[0], HasSubstr("line 9"));
  EXPECT_THAT(r.warnings[0], HasSubstr("second"));
}

TEST(SlurmConf, MarkerLookalikesAreOrdinaryLines) {
  // Only the exact marker prefix followed by a blank or the end of the line counts.
  const std::string conf = "# BEGIN gpufleet managed nodesX\n#BEGIN gpufleet managed nodes\n";
  SlurmMergeResult r = merge(conf, workers(1));
  EXPECT_TRUE(r.warnings.empty());
  EXPECT_EQ(strip_managed_blocks(r.text.substr(conf.size())), "");
  EXPECT_EQ(r.text.substr(0, conf.size()), conf);
}

TEST(SlurmConf, CompressHostlistRangesAndPlainNames) {
  EXPECT_EQ(compress_hostlist({"worker-1", "worker-2", "worker-3", "worker-5"}), "worker-[1-3,5]");
  EXPECT_EQ(compress_hostlist({"worker-5", "worker-1", "worker-3", "worker-2", "worker-3"}),
            "worker-[1-3,5]");
  EXPECT_EQ(compress_hostlist({"worker-7"}), "worker-7");
  EXPECT_EQ(compress_hostlist({}), "");
  EXPECT_EQ(compress_hostlist({"w-10", "w-9", "w-11", "w-2"}), "w-[2,9-11]");
  EXPECT_EQ(compress_hostlist({"worker-1", "login1", "worker-2", "ctl"}),
            "ctl,login1,worker-[1-2]");
  EXPECT_EQ(compress_hostlist({"gpu-a-1", "gpu-a-2", "gpu-b-1", "gpu-b-2"}),
            "gpu-a-[1-2],gpu-b-[1-2]");
  EXPECT_EQ(compress_hostlist({"alpha", "beta"}), "alpha,beta");
}

TEST(SlurmConf, CompressHostlistKeepsZeroPadding) {
  EXPECT_EQ(compress_hostlist({"n01", "n02", "n03"}), "n[01-03]");
  EXPECT_EQ(compress_hostlist({"n01", "n02", "n10"}), "n[01-02,10]");
  EXPECT_EQ(compress_hostlist({"n1", "n01"}), "n01,n1");
  EXPECT_EQ(compress_hostlist({"n008", "n009", "n010", "n011"}), "n[008-011]");
}

TEST(SlurmConf, ExpandHostlistIsTheInverseOfCompress) {
  EXPECT_THAT(expand_hostlist("c[1-3,07-08],login1"),
              ElementsAre("c1", "c2", "c3", "c07", "c08", "login1"));
  EXPECT_THAT(expand_hostlist("r[1-2]n[1-2]"), ElementsAre("r1n1", "r1n2", "r2n1", "r2n2"));
  EXPECT_THAT(expand_hostlist("c[1-"), ElementsAre("c[1-"));
  EXPECT_THAT(expand_hostlist("c[3-1]"), ElementsAre("c[3-1]"));
  EXPECT_EQ(expand_hostlist("c[1-99999999]").size(), 65536u);
  std::vector<std::string> names = {"worker-1", "worker-2", "worker-10", "n01", "n02", "ctl"};
  std::vector<std::string> round = expand_hostlist(compress_hostlist(names));
  std::sort(names.begin(), names.end());
  std::sort(round.begin(), round.end());
  EXPECT_EQ(round, names);
}

}  // namespace
}  // namespace gf

namespace gf {
namespace {

TEST(SlurmLayoutWire, RoundTripsNodesWithPortsAndFutureStateAndPartitions) {
  SlurmLayout l;
  SlurmNodeLine n;
  n.name = "worker-3";
  n.cpus = 192;
  n.real_memory_mb = 2097152;
  n.features = "ml.p5.48xlarge";
  n.port = 4;
  n.state = "FUTURE";
  l.nodes.push_back(n);
  l.partitions.push_back({"gpu-training", {"worker-3"}});
  auto back = slurm_layout_from_json(slurm_layout_to_json(l));
  ASSERT_TRUE(back.ok()) << back.status().message();
  ASSERT_EQ(back->nodes.size(), 1u);
  EXPECT_EQ(back->nodes[0].port, 4);
  EXPECT_EQ(back->nodes[0].state, "FUTURE");
  EXPECT_EQ(back->partitions[0].nodes, std::vector<std::string>{"worker-3"});
}

TEST(SlurmLayoutWire, RefusesNamesSlurmOrAShellCouldMisreadNamingTheField) {
  Json j = {{"Nodes", Json::array({{{"Name", "w-1 State=DOWN"}}})}, {"Partitions", Json::array()}};
  auto r = slurm_layout_from_json(j);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), ::testing::HasSubstr("Nodes[0].Name"));
  j = {{"Nodes", Json::array({{{"Name", "w-1"}, {"Port", 70000}}})}, {"Partitions", Json::array()}};
  EXPECT_THAT(slurm_layout_from_json(j).status().message(), ::testing::HasSubstr("Nodes[0].Port"));
  j = {{"Nodes", Json::array({{{"Name", "w-1"}, {"State", "DRAIN"}}})},
       {"Partitions", Json::array()}};
  EXPECT_THAT(slurm_layout_from_json(j).status().message(), ::testing::HasSubstr("Nodes[0].State"));
  j = {{"Nodes", Json::array()},
       {"Partitions", Json::array({{{"Name", "p"}, {"Nodes", {"a,b"}}}})}};
  EXPECT_THAT(slurm_layout_from_json(j).status().message(),
              ::testing::HasSubstr("Partitions[0].Nodes"));
  EXPECT_THAT(slurm_layout_from_json(Json::array()).status().message(),
              ::testing::HasSubstr("expected an object"));
}

TEST(SlurmConfMerge, ARealNodeLineCarriesItsAddressPortAndState) {
  SlurmLayout l;
  SlurmNodeLine n;
  n.name = "w-1";
  n.hostname = "localhost";
  n.address = "127.0.0.1";
  n.port = 17002;
  n.cpus = 4;
  n.state = "FUTURE";
  l.nodes.push_back(n);
  SlurmNodeLine running = n;
  running.name = "w-2";
  running.state = "";
  l.nodes.push_back(running);
  const std::string text = merge_slurm_conf("", l).text;
  EXPECT_THAT(text, ::testing::HasSubstr(
                        "NodeName=w-1 NodeHostname=localhost NodeAddr=127.0.0.1 Port=17002 CPUs=4 "
                        "State=FUTURE\n"));
  EXPECT_THAT(text,
              ::testing::HasSubstr(
                  "NodeName=w-2 NodeHostname=localhost NodeAddr=127.0.0.1 Port=17002 CPUs=4\n"));
}

}  // namespace
}  // namespace gf

namespace gf {
namespace {

// docs/slurm.md "The default partition": the layout's default partition says Default=YES, so
// `sbatch` without -p runs there.
TEST(SlurmConfDefault, TheDefaultPartitionIsRenderedDefaultYes) {
  SlurmLayout layout;
  layout.nodes.push_back(SlurmNodeLine{"w-1", 4, 0, 0, "", "", "", 0, ""});
  layout.partitions.push_back({"gpu-training", {"w-1"}, true});
  layout.partitions.push_back({"debug", {"w-1"}, false});
  const std::string text = merge_slurm_conf("", layout).text;
  EXPECT_NE(text.find("PartitionName=gpu-training Nodes=w-1 Default=YES\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("PartitionName=debug Nodes=w-1\n"), std::string::npos) << text;
}

TEST(SlurmConfDefault, AHandWrittenDefaultPartitionWinsOverTheLayouts) {
  SlurmLayout layout;
  layout.nodes.push_back(SlurmNodeLine{"w-1", 4, 0, 0, "", "", "", 0, ""});
  layout.partitions.push_back({"gpu-training", {"w-1"}, true});
  const std::string text =
      merge_slurm_conf("PartitionName=mine Nodes=w-1 Default=yes\n", layout).text;
  EXPECT_EQ(text.find("Default=YES"), std::string::npos) << text;
}

TEST(SlurmConfDefault, TheLayoutCarriesTheDefaultFlagToTheAgent) {
  SlurmLayout layout;
  layout.partitions.push_back({"gpu-training", {}, true});
  auto back = slurm_layout_from_json(slurm_layout_to_json(layout));
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  ASSERT_EQ(back->partitions.size(), 1u);
  EXPECT_TRUE(back->partitions[0].is_default);
}

// docs/slurm.md "Paths that work anywhere".
TEST(SlurmRuntimeDir, TheLongestStepSocketOfTheLongestNameFitsInSunPath) {
  // A runtime directory of 21 characters: the template's 15 and room to spare.
  const std::string rt = std::string(kSlurmRuntimeTemplate) + "ABCDEF";
  ASSERT_EQ(rt.size(), 21u);
  EXPECT_LE(slurm_longest_step_socket(rt, std::string(kSlurmSocketNameMax, 'n')).size(),
            kUnixSocketPathMax);
  EXPECT_GT(slurm_longest_step_socket(rt, std::string(kSlurmSocketNameMax + 1, 'n')).size(),
            kUnixSocketPathMax);
}

}  // namespace
}  // namespace gf
