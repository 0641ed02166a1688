// Inputs the fuzz targets found (tests/fuzz/, docs/fuzzing.md), one test per broken rule. Each
// input is also kept in tests/fuzz/corpus/<target>/ so every fuzz run replays it.
#include <gtest/gtest.h>

#include <string>

#include "orchestrator/slurm/slurm_conf.h"

namespace gf {
namespace {

SlurmLayout one_worker() {
  SlurmLayout layout;
  layout.nodes.push_back({"worker-1", 192, 2000000, 8, "p5"});
  layout.partitions.push_back({"gpu", {"worker-1"}});
  return layout;
}

// slurm_conf: a file of one line ending in a lone CR ("\xbf\x04]7\x93=\0\0\r") had no LF, so the
// merge chose "\n" for its blocks; the LF it appended made the first line CRLF, and the next
// merge rewrote every managed line with CRLF. Merging the result again must change nothing.
TEST(SlurmConf, OneLineFileEndingInCrMergesIdempotently) {
  for (const std::string& existing :
       {std::string("ClusterName=x\r"), std::string("\xbf\x04]7\x93=\0\0\r", 9)}) {
    const SlurmMergeResult once = merge_slurm_conf(existing, one_worker());
    const SlurmMergeResult twice = merge_slurm_conf(once.text, one_worker());
    EXPECT_EQ(twice.text, once.text);
    // The user's bytes come first, their CR completed to CRLF, then CRLF managed lines.
    EXPECT_EQ(once.text.substr(0, existing.size() + 1), existing + "\n");
    EXPECT_NE(once.text.find("State=CLOUD\r\n# END gpufleet managed nodes\r\n"), std::string::npos)
        << once.text;
  }
}

}  // namespace
}  // namespace gf
