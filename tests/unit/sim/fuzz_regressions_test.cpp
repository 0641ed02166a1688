// Inputs the fuzz targets found (tests/fuzz/, docs/fuzzing.md), one test per broken rule. Each
// input is also kept in tests/fuzz/corpus/<target>/ so every fuzz run replays it.
#include <gtest/gtest.h>

#include <string>

#include "sim/scenario.h"

namespace gf {
namespace {

Status refusal(const std::string& text) {
  const Result<Scenario> s = parse_scenario(text, ".");
  return s.ok() ? Status() : s.status();
}

// scenario: `at: 9223372036854775807` multiplied the seconds into microseconds before checking
// them (signed overflow), and a step or latency of ~292,000 years overflowed the simulated clock
// when added to it. Step times, config durations and cloud latencies are bounded at 36500d.
TEST(Scenario, DurationsThatOverflowTheSimulatedClockAreValidationErrors) {
  for (const std::string& text : {
           std::string("steps: [{at: 9223372036854775807, call: GET /v1/clusters}]"),
           std::string("steps: [{at: 9223372036854775807us, call: GET /v1/clusters}]"),
           // JSON keeps this one a number (YAML hands its text to parse_duration).
           std::string(R"({"steps": [{"at": 18446744073709551615, "call": "GET /v1/clusters"}]})"),
           std::string("config: {minCountTimeout: 9223372036854775807}"),
           std::string("cloud: {launchLatency: 9223372036854775807}"),
           std::string("cloud: {launchLatency: 36501d}"),
           std::string("cloud: {changes: [{at: 9223372036854775807, capacity: {}}]}"),
       }) {
    const Status st = refusal(text);
    EXPECT_EQ(st.code(), ErrorCode::kValidation) << text;
    EXPECT_NE(st.message().find("must be at most 36500d"), std::string::npos) << st.message();
  }
  // A negative latency was accepted (a launch would complete before it was asked for).
  EXPECT_NE(refusal("cloud: {launchLatency: -1}").message().find("must not be negative"),
            std::string::npos);
  EXPECT_TRUE(refusal("steps: [{at: 36500d, call: GET /v1/clusters}]").ok());
}

}  // namespace
}  // namespace gf
