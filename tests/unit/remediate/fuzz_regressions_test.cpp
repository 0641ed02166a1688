// Inputs the fuzz targets found (tests/fuzz/, docs/fuzzing.md), one test per broken rule. Each
// input is also kept in tests/fuzz/corpus/<target>/ so every fuzz run replays it.
#include <gtest/gtest.h>

#include <string>

#include "model/remediation_policy.h"

namespace gf::remediate {
namespace {

Status refusal(const std::string& json) {
  const Result<Json> doc = parse_json(json);
  EXPECT_TRUE(doc.ok()) << json;
  const Result<Policy> p = Policy::from_json(*doc);
  return p.ok() ? Status() : p.status();
}

// remediation_policy: {"Cooldown": -9223372036854775808} multiplied a number of seconds into
// microseconds before checking it (signed overflow), and a negative count of seconds was accepted
// although the same value as text is refused. Windows are also added to times (completion +
// Cooldown), so they are bounded: at most 3650d.
TEST(RemediationPolicy, DurationsThatCannotBeAddedToATimeAreValidationErrors) {
  for (const std::string& json :
       {std::string(R"({"Cooldown": -9223372036854775808})"),
        std::string(R"({"Cooldown": 9223372036854775807})"),
        std::string(R"({"CircuitBreaker": {"Window": 18446744073709551615}})"),
        std::string(R"({"EscalationWindow": "9223372036854775807us"})"),
        std::string(R"({"AlertPersistence": {"xid": 315360001}})")}) {
    const Status st = refusal(json);
    EXPECT_EQ(st.code(), ErrorCode::kValidation) << json;
  }
  EXPECT_NE(refusal(R"({"Cooldown": -5})").message().find("Cooldown: must not be negative"),
            std::string::npos);
  EXPECT_NE(refusal(R"({"Cooldown": "3651d"})").message().find("Cooldown: must be at most 3650d"),
            std::string::npos);
  // The bound itself is accepted, as seconds and as text.
  EXPECT_TRUE(refusal(R"({"Cooldown": 315360000, "EscalationWindow": "3650d"})").ok());
}

}  // namespace
}  // namespace gf::remediate
