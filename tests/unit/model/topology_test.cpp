// Topology levels and the layout a cloud fills in launch order (docs/scheduling.md "Topology").
#include "model/topology.h"

#include <gtest/gtest.h>

namespace gf {
namespace {

const std::string kL1(kTopologyLayer1);
const std::string kL2(kTopologyLayer2);
const std::string kL3(kTopologyLayer3);

TEST(TopologyLevels, AreNumberedCoarsestFirst) {
  EXPECT_EQ(topology_level(kTopologyLayer1), 1);
  EXPECT_EQ(topology_level(kTopologyLayer3), 3);
  EXPECT_EQ(topology_level(kTopologyHostname), kTopologyLevelCount);
  EXPECT_FALSE(topology_level("rack").has_value());
  EXPECT_EQ(topology_level_label(2), kTopologyLayer2);
  EXPECT_EQ(topology_level_label(0), "");
}

TEST(TopologyLayout, ParsesAndRefusesBadFieldsByPath) {
  auto ok = TopologyLayout::from_json(Json{{"nodesPerBlock", 16}, {"blocksPerSpine", 4}},
                                      "cloud.topology");
  ASSERT_TRUE(ok.ok()) << ok.status().to_string();
  EXPECT_EQ(ok->nodes_per_block, 16);
  EXPECT_EQ(ok->blocks_per_spine, 4);
  auto zero = TopologyLayout::from_json(Json{{"nodesPerBlock", 0}}, "cloud.topology");
  EXPECT_NE(zero.status().message().find("cloud.topology.nodesPerBlock: expected 1..100000"),
            std::string::npos)
      << zero.status().message();
  auto typo =
      TopologyLayout::from_json(Json{{"nodesPerBlock", 4}, {"blocksPerSpin", 2}}, "cloud.topology");
  EXPECT_NE(typo.status().message().find("cloud.topology.blocksPerSpin: unknown field"),
            std::string::npos)
      << typo.status().message();
  EXPECT_FALSE(TopologyLayout::from_json(Json(16), "cloud.topology").ok());
}

TEST(TopologySlots, FillBlocksInLaunchOrder_SpinesGroupBlocks) {
  TopologySlots slots(TopologyLayout{2, 2});
  std::vector<std::string> blocks, spines;
  for (int i = 0; i < 5; ++i) {
    auto l = slots.assign("c", "ml.p5.48xlarge", "i-" + std::to_string(i));
    EXPECT_EQ(l.at(kL1), "nn-c");
    blocks.push_back(l.at(kL3));
    spines.push_back(l.at(kL2));
  }
  EXPECT_EQ(blocks,
            (std::vector<std::string>{"nn-c-b0", "nn-c-b0", "nn-c-b1", "nn-c-b1", "nn-c-b2"}));
  EXPECT_EQ(spines,
            (std::vector<std::string>{"nn-c-s0", "nn-c-s0", "nn-c-s0", "nn-c-s0", "nn-c-s1"}));
}

TEST(TopologySlots, AReplacementTakesTheFreedSlot_OneTypePerBlock) {
  TopologySlots slots(TopologyLayout{2, 1});
  slots.assign("c", "p5", "i-0");
  slots.assign("c", "p5", "i-1");
  EXPECT_EQ(slots.assign("c", "p4d", "i-2").at(kL3), "nn-c-b1");  // b0 is p5's
  slots.release("i-0");
  EXPECT_EQ(slots.assign("c", "p5", "i-3").at(kL3), "nn-c-b0");
  EXPECT_EQ(slots.assign("c", "p5", "i-4").at(kL3), "nn-c-b2");  // b1 is p4d's
  EXPECT_EQ(slots.assign("c", "p5", "i-3").at(kL3), "nn-c-b0");  // a repeat: the same slot
  EXPECT_EQ(slots.assign("d", "p5", "i-5").at(kL3), "nn-d-b0");  // clusters have their own
}

TEST(TopologySlots, RestoreAfterARestartHoldsTheSameSlots) {
  TopologySlots first(TopologyLayout{2, 1});
  auto l0 = first.assign("c", "p5", "i-0");
  auto l1 = first.assign("c", "p5", "i-1");
  auto l2 = first.assign("c", "p5", "i-2");
  TopologySlots second(TopologyLayout{2, 1});
  second.restore("c", "p5", "i-0", l0);
  second.restore("c", "p5", "i-2", l2);
  second.restore("c", "p5", "i-9", {{kL3, "nn-other-b0"}});       // not this layout's: ignored
  EXPECT_EQ(second.assign("c", "p5", "i-3").at(kL3), "nn-c-b0");  // i-1's place
  EXPECT_EQ(second.assign("c", "p5", "i-4").at(kL3), "nn-c-b1");
  EXPECT_EQ(second.assign("c", "p5", "i-5").at(kL3), "nn-c-b2");
}

TEST(TopologySlots, OffWithoutALayout) {
  TopologySlots slots{TopologyLayout{}};
  EXPECT_TRUE(slots.assign("c", "p5", "i-0").empty());
}

}  // namespace
}  // namespace gf
