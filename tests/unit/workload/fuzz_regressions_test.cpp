// Inputs the fuzz targets found (tests/fuzz/, docs/fuzzing.md), one test per broken rule. Each
// input is also kept in tests/fuzz/corpus/<target>/ so every fuzz run replays it.
#include <gtest/gtest.h>

#include <string>

#include "model/propagation_policy.h"
#include "workload/pytorchjob.h"

namespace gf::workload {
namespace {

std::string job_with(const std::string& run_policy, const std::string& duration = "1h") {
  return R"({"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob",
             "metadata": {"name": "big", "annotations": {"gpufleet.io/duration": ")" +
         duration + R"("}},
             "spec": {"runPolicy": )" +
         run_policy + R"(,
               "pytorchReplicaSpecs": {"Master": {"replicas": 1, "template": {"spec":
                 {"containers": [{"name": "m", "image": "x",
                                  "resources": {"requests": {"cpu": "1"}}}]}}}}}})";
}

Status job_refusal(const std::string& json) {
  const Result<PyTorchJob> job = parse_pytorchjob(*parse_json(json));
  return job.ok() ? Status() : job.status();
}

// workload_apply: activeDeadlineSeconds / ttlSecondsAfterFinished of 9223372036854775807 were
// accepted, and the workload controller's start + seconds(deadline) then overflowed (a wrapped
// deadline would fail the job at once). They are bounded at a century, as is the duration
// annotation.
TEST(PyTorchJob, DeadlinesBeyondACenturyAreValidationErrorsNotOverflows) {
  for (const std::string& json : {job_with(R"({"activeDeadlineSeconds": 9223372036854775807})"),
                                  job_with(R"({"ttlSecondsAfterFinished": 9223372036854775807})"),
                                  job_with(R"({"activeDeadlineSeconds": 3153600001})"),
                                  job_with("{}", "9223372036854775807us")}) {
    const Status st = job_refusal(json);
    EXPECT_EQ(st.code(), ErrorCode::kValidation) << json;
    EXPECT_NE(st.message().find("100 years"), std::string::npos) << st.message();
  }
  EXPECT_TRUE(job_refusal(job_with(R"({"activeDeadlineSeconds": 3153600000,
                                       "ttlSecondsAfterFinished": 0})",
                                   "36500d"))
                  .ok());
}

// workload_apply: the same for failover's tolerationSeconds and gracePeriodSeconds, which are
// added to the time a job stopped running.
TEST(PropagationPolicy, FailoverSecondsBeyondACenturyAreValidationErrors) {
  for (const std::string& application :
       {std::string(R"({"decisionConditions": {"tolerationSeconds": 9223372036854775807}})"),
        std::string(R"({"purgeMode": "Gracefully", "gracePeriodSeconds": 9223372036854775807})")}) {
    const std::string json = R"({"apiVersion": "policy.one.alibabacloud.com/v1alpha1",
      "kind": "PropagationPolicy", "metadata": {"name": "p"},
      "spec": {"resourceSelectors": [{"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob"}],
               "failover": {"application": )" +
                             application + "}}}";
    const Result<PropagationPolicy> p = parse_propagation_policy(*parse_json(json));
    ASSERT_FALSE(p.ok()) << application;
    EXPECT_NE(p.status().message().find("100 years"), std::string::npos) << p.status().message();
  }
}

}  // namespace
}  // namespace gf::workload
