// PropagationPolicy parsing and selection (docs/dispatch.md): both published examples
// verbatim, selection of the example PyTorchJob, most-specific matching, and refusals naming the
// field.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "model/propagation_policy.h"
#include "workload/pytorchjob.h"
#include "workload_test_util.h"

namespace gf::workload {
namespace {

using testing::error_of;
using testing::read_example;
using testing::yaml;

Result<PropagationPolicy> parse(const std::string& text) {
  return parse_propagation_policy(yaml(text));
}

std::string policy_yaml(const std::string& name, const std::string& selector_lines,
                        const std::string& extra_spec = "") {
  return "apiVersion: policy.one.alibabacloud.com/v1alpha1\n"
         "kind: PropagationPolicy\n"
         "metadata:\n"
         "  name: " +
         name +
         "\n"
         "spec:\n" +
         extra_spec +
         "  resourceSelectors:\n"
         "    - apiVersion: kubeflow.org/v1\n"
         "      kind: PyTorchJob\n" +
         selector_lines;
}

PropagationPolicy must_parse(const std::string& text) {
  Result<PropagationPolicy> p = parse(text);
  EXPECT_TRUE(p.ok()) << p.status().to_string();
  return p.ok() ? *p : PropagationPolicy{};
}

TEST(PropagationPolicy, GangQueueExampleParsesVerbatim) {
  Result<PropagationPolicy> p = parse(read_example("propagationpolicy-gang-queue.yaml"));
  ASSERT_TRUE(p.ok()) << p.status().to_string();
  EXPECT_EQ(p->name, "example-policy");
  EXPECT_EQ(p->ns, "default");
  EXPECT_TRUE(p->suspend_scheduling);
  EXPECT_TRUE(p->propagate_deps);
  EXPECT_TRUE(p->gang);
  EXPECT_EQ(p->replica_scheduling_type, "Divided");
  EXPECT_EQ(p->toleration_seconds, 30);
  EXPECT_EQ(p->purge_mode, PurgeMode::kImmediately);
  EXPECT_EQ(p->grace_period_seconds, 600);
  EXPECT_TRUE(p->cluster_names.empty());
  ASSERT_EQ(p->selectors.size(), 1u);
  EXPECT_EQ(p->selectors[0], (ResourceSelector{"kubeflow.org/v1", "PyTorchJob", "", "", {}}));
  EXPECT_TRUE(p->warnings.empty()) << p->warnings.front();
  EXPECT_EQ(p->doc, yaml(read_example("propagationpolicy-gang-queue.yaml")));
}

TEST(PropagationPolicy, GangExampleDoesNotSuspendScheduling) {
  Result<PropagationPolicy> p = parse(read_example("propagationpolicy-gang.yaml"));
  ASSERT_TRUE(p.ok()) << p.status().to_string();
  EXPECT_FALSE(p->suspend_scheduling);
  EXPECT_TRUE(p->gang);
  EXPECT_EQ(p->toleration_seconds, 30);
  EXPECT_EQ(p->purge_mode, PurgeMode::kImmediately);
  EXPECT_TRUE(p->warnings.empty()) << p->warnings.front();
}

TEST(PropagationPolicy, ExamplePolicySelectsTheExamplePyTorchJob) {
  Result<PropagationPolicy> p = parse(read_example("propagationpolicy-gang-queue.yaml"));
  Result<PyTorchJob> job = parse_pytorchjob(yaml(read_example("pytorchjob.yaml")));
  ASSERT_TRUE(p.ok() && job.ok());
  EXPECT_TRUE(p->selects("kubeflow.org/v1", "PyTorchJob", job->name, job->ns, job->labels));
  // Another namespace, kind or apiVersion is not selected.
  EXPECT_FALSE(p->selects("kubeflow.org/v1", "PyTorchJob", job->name, "team-a", job->labels));
  EXPECT_FALSE(p->selects("kubeflow.org/v1", "TFJob", job->name, job->ns, job->labels));
  EXPECT_FALSE(p->selects("kubeflow.org/v2", "PyTorchJob", job->name, job->ns, job->labels));
}

TEST(PropagationPolicy, SelectsByNameAndLabels) {
  const PropagationPolicy by_name = must_parse(policy_yaml("p", "      name: pytorch-test\n"));
  const PropagationPolicy by_labels =
      must_parse(policy_yaml("p",
                             "      labelSelector:\n        matchLabels:\n"
                             "          app: pytorchjob\n          team: a\n"));
  const std::map<std::string, std::string> labels{{"app", "pytorchjob"}, {"team", "a"}};
  EXPECT_TRUE(by_name.selects("kubeflow.org/v1", "PyTorchJob", "pytorch-test", "default", {}));
  EXPECT_FALSE(by_name.selects("kubeflow.org/v1", "PyTorchJob", "other", "default", {}));
  EXPECT_TRUE(by_labels.selects("kubeflow.org/v1", "PyTorchJob", "x", "default", labels));
  EXPECT_FALSE(
      by_labels.selects("kubeflow.org/v1", "PyTorchJob", "x", "default", {{"app", "pytorchjob"}}));
  EXPECT_FALSE(by_labels.selects("kubeflow.org/v1", "PyTorchJob", "x", "default",
                                 {{"app", "pytorchjob"}, {"team", "b"}}));
}

TEST(PropagationPolicy, MatchPolicyPrefersNameThenLabelsThenKindThenPolicyName) {
  const PropagationPolicy kind_b = must_parse(policy_yaml("b-kind", ""));
  const PropagationPolicy kind_a = must_parse(policy_yaml("a-kind", ""));
  const PropagationPolicy labels = must_parse(
      policy_yaml("z-labels", "      labelSelector:\n        matchLabels:\n          app: pt\n"));
  const PropagationPolicy named = must_parse(policy_yaml("zz-name", "      name: job\n"));
  const std::map<std::string, std::string> job_labels{{"app", "pt"}};
  const std::string api = "kubeflow.org/v1";

  std::vector<const PropagationPolicy*> all{&kind_b, &labels, &named, &kind_a};
  EXPECT_EQ(match_policy(all, api, "PyTorchJob", "job", "default", job_labels), &named);
  EXPECT_EQ(match_policy(all, api, "PyTorchJob", "other", "default", job_labels), &labels);
  EXPECT_EQ(match_policy(all, api, "PyTorchJob", "other", "default", {}), &kind_a);
  EXPECT_EQ(match_policy({&kind_b, &kind_a}, api, "PyTorchJob", "x", "default", {}), &kind_a);
  EXPECT_EQ(match_policy({&kind_a, &kind_b}, api, "PyTorchJob", "x", "default", {}), &kind_a);
  EXPECT_EQ(match_policy(all, api, "PyTorchJob", "job", "team-a", job_labels), nullptr);
  EXPECT_EQ(match_policy({}, api, "PyTorchJob", "job", "default", job_labels), nullptr);
}

TEST(PropagationPolicy, BadPurgeModeRefusedNamingTheField) {
  std::string text = read_example("propagationpolicy-gang.yaml");
  text.replace(text.find("purgeMode: Immediately"), 22, "purgeMode: Sometimes");
  EXPECT_EQ(error_of(parse(text)),
            "spec.failover.application.purgeMode: \"Sometimes\" is not a purge mode (expected "
            "Immediately, Directly, Gracefully or Never)");
}

TEST(PropagationPolicy, FailoverModesAndGracePeriod) {
  const std::string failover =
      "  failover:\n    application:\n      purgeMode: Gracefully\n"
      "      gracePeriodSeconds: 120\n";
  const PropagationPolicy p = must_parse(policy_yaml("p", "", failover));
  EXPECT_EQ(p.purge_mode, PurgeMode::kGracefully);
  EXPECT_EQ(p.grace_period_seconds, 120);
  EXPECT_FALSE(p.toleration_seconds.has_value());
  EXPECT_EQ(parse_purge_mode("Directly"), PurgeMode::kDirectly);
  EXPECT_EQ(parse_purge_mode("Never"), PurgeMode::kNever);
  EXPECT_EQ(parse_purge_mode("Graciously"), PurgeMode::kGracefully);

  EXPECT_EQ(error_of(parse(policy_yaml(
                "p", "", "  failover:\n    application:\n      gracePeriodSeconds: 0\n"))),
            "spec.failover.application.gracePeriodSeconds: must be > 0 and at most 3153600000 (100 "
            "years), got 0");
  EXPECT_EQ(error_of(parse(policy_yaml("p", "",
                                       "  failover:\n    application:\n      decisionConditions:\n"
                                       "        tolerationSeconds: -5\n"))),
            "spec.failover.application.decisionConditions.tolerationSeconds: must be between 0 and "
            "3153600000 (100 years), got -5");
}

TEST(PropagationPolicy, SchedulingTypesValidated) {
  const std::string replica_scheduling = "  placement:\n    replicaScheduling:\n";
  EXPECT_EQ(error_of(parse(policy_yaml(
                "p", "", replica_scheduling + "      customSchedulingType: Coscheduling\n"))),
            "spec.placement.replicaScheduling.customSchedulingType: \"Coscheduling\" is not "
            "supported (the only custom scheduling type is Gang)");
  EXPECT_EQ(error_of(parse(
                policy_yaml("p", "", replica_scheduling + "      replicaSchedulingType: X\n"))),
            "spec.placement.replicaScheduling.replicaSchedulingType: \"X\" is not a replica "
            "scheduling type (expected Divided or Duplicated)");
  const PropagationPolicy dup =
      must_parse(policy_yaml("p", "",
                             "  placement:\n    clusterAffinity:\n      clusterNames: [c1, c2]\n"
                             "    replicaScheduling:\n      replicaSchedulingType: Duplicated\n"));
  EXPECT_EQ(dup.replica_scheduling_type, "Duplicated");
  EXPECT_FALSE(dup.gang);
  EXPECT_EQ(dup.cluster_names, (std::vector<std::string>{"c1", "c2"}));
}

TEST(PropagationPolicy, SelectorsRequired) {
  const std::string no_selectors =
      "apiVersion: policy.one.alibabacloud.com/v1alpha1\nkind: PropagationPolicy\n"
      "metadata:\n  name: p\nspec:\n  propagateDeps: true\n";
  EXPECT_EQ(error_of(parse(no_selectors)),
            "spec.resourceSelectors: is required: at least one selector (apiVersion and kind)");
  EXPECT_EQ(error_of(parse(no_selectors + "  resourceSelectors: []\n")),
            "spec.resourceSelectors: is required: at least one selector (apiVersion and kind)");
  EXPECT_EQ(error_of(parse(no_selectors + "  resourceSelectors:\n    - kind: PyTorchJob\n")),
            "spec.resourceSelectors[0].apiVersion: is required");
  EXPECT_EQ(error_of(parse(policy_yaml("p",
                                       "      labelSelector:\n        matchExpressions:\n"
                                       "          - {key: a, operator: Exists}\n"))),
            "spec.resourceSelectors[0].labelSelector.matchExpressions: is not supported; select "
            "by name or matchLabels");
}

TEST(PropagationPolicy, KarmadaApiVersionAcceptedAndUnknownFieldsWarn) {
  std::string text = policy_yaml("p", "", "  priority: 5\n");
  text.replace(text.find("policy.one.alibabacloud.com"), 27, "policy.karmada.io");
  const PropagationPolicy p = must_parse(text);
  EXPECT_EQ(p.warnings, (std::vector<std::string>{"spec.priority: unknown field, ignored"}));
  EXPECT_TRUE(is_propagation_policy("policy.karmada.io/v1alpha1", "PropagationPolicy"));
  EXPECT_TRUE(is_propagation_policy("policy.one.alibabacloud.com/v1alpha1", "PropagationPolicy"));
  EXPECT_FALSE(is_propagation_policy("policy.karmada.io/v1alpha1", "ClusterPropagationPolicy"));
}

}  // namespace
}  // namespace gf::workload
