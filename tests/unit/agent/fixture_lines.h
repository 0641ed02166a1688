// The agent's fixtures (tests/unit/agent/fixtures/) and the recognisable lines of its kern.log,
// shared by the unit tests and the integration test that runs the real binary on them.
#pragma once

#include <string>

namespace gf::testing {

inline const std::string kAgentFixtures =
    std::string(GPUFLEET_SOURCE_DIR) + "/tests/unit/agent/fixtures";
inline const std::string kFixtureXid79 =
    "Nov 30 05:00:01 gpu-7 kernel: [  101.000002] NVRM: Xid (PCI:0000:b3:00.0): 79, pid=1234, "
    "name=nv-hostengine";
inline const std::string kFixtureXid48 =
    "Nov 30 05:00:04 gpu-7 kernel: [  104.000005] NVRM: Xid (PCI:0000:03:00): 48, pid=91237, "
    "name=nv-hostengine, Ch 00000076, "
    "errorString CTX SWITCH TIMEOUT, Info 0x3c046";
inline const std::string kFixtureHungTask =
    "Nov 30 05:00:07 gpu-7 kernel: [  107.000007] INFO: task python3:4711 blocked for more than "
    "120 seconds.";

}  // namespace gf::testing
