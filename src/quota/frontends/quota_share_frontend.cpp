// AWS Batch quota shares front end (docs/quota-frontends.md): ServiceEnvironment, SchedulingPolicy,
// JobQueue and QuotaShare bodies, the examples/quota-shares.json bundle, and their compilation: one
// root cohort per job queue ("jobqueue:<name>"), one leaf per share ("share:<queue>/<share>"), one
// dimension per instance type. RESERVE = lending 0 + borrowing 0; LEND = borrowing 0;
// LEND_AND_BORROW = borrowing floor(borrowLimit% x maxCapacity), none for -1.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <regex>
#include <set>
#include <utility>

#include "model/aws_tags.h"
#include "quota/frontends/frontend_internal.h"

namespace gf::frontend {
namespace detail {
namespace {

constexpr std::string_view kServiceType = "SAGEMAKER_TRAINING";
constexpr size_t kMaxSharesPerQueue = 20;
constexpr size_t kMaxShareLimits = 5;

struct CapacityLimit {
  std::string unit;
  int64_t max = 0;
};

struct EnvSpec {
  std::string name;
  std::vector<CapacityLimit> limits;
  std::vector<std::string> clusters;
};

struct PolicySpec {
  std::string name;
  IdleStrategy idle = IdleStrategy::kFifo;
};

struct QueueSpec {
  std::string name;
  std::string state;
  std::string policy;  // name; empty when none is given
  std::string env;     // name
};

enum class Strategy : uint8_t { kReserve, kLend, kLendAndBorrow };

struct ShareSpec {
  std::string name;
  std::string queue;  // name
  std::vector<CapacityLimit> limits;
  Strategy strategy = Strategy::kReserve;
  int64_t borrow_limit = -1;  // percent; -1 = unlimited (LEND_AND_BORROW only)
  bool in_share_preemption = false;
};

bool looks_like_instance_type(const std::string& s) {
  static const std::regex re(R"(ml\.[a-z][a-z0-9-]*\.[a-z0-9]+)");
  return std::regex_match(s, re);
}

Status fail_at(const std::string& field, const std::string& message) {
  return validation_error(field + ": " + message);
}

// Reads `key` as an enum string with a default, writing the default back into `doc`.
std::string read_choice(ObjectReader& r, Json& doc, std::string_view key,
                        std::initializer_list<std::string_view> allowed, std::string_view dflt) {
  std::string v = r.optional_string(key).value_or(std::string(dflt));
  if (!r.ok()) return v;
  bool ok = false;
  std::string list;
  for (std::string_view a : allowed) {
    ok = ok || v == a;
    list += (list.empty() ? "" : ", ") + std::string(a);
  }
  if (!ok) r.fail(key, "expected one of " + list + ", got " + in_quotes(v));
  doc[std::string(key)] = v;
  return v;
}

std::string read_name(ObjectReader& r, std::string_view key) {
  std::string name = r.required_string(key);
  if (r.ok() && !valid_aws_name(name)) {
    r.fail(key, in_quotes(name) + " is not a valid name (1-128 letters, digits, '-' and '_')");
  }
  return name;
}

// capacityLimits: [{capacityUnit: <instance type>, maxCapacity >= 1}], `min`..`max` entries.
Result<std::vector<CapacityLimit>> read_limits(ObjectReader& r, size_t min, size_t max,
                                               std::vector<std::string>& warnings) {
  const Json* arr = r.optional_array("capacityLimits");
  if (!r.ok()) return r.status();
  const std::string field = r.field_path("capacityLimits");
  const size_t n = arr ? arr->size() : 0;
  if (n < min || n > max) {
    return fail_at(field, fmt::format("must list {} to {} capacity limits, got {}", min, max, n));
  }
  std::vector<CapacityLimit> out;
  std::set<std::string, std::less<>> seen;
  for (size_t i = 0; i < n; ++i) {
    ObjectReader l((*arr)[i], path_index(field, i));
    CapacityLimit c;
    c.unit = l.required_string("capacityUnit");
    c.max = l.required_int("maxCapacity");
    if (!l.ok()) return l.status();
    if (c.unit == "NUM_INSTANCES") {
      return fail_at(l.field_path("capacityUnit"),
                     "NUM_INSTANCES is not supported; a quota-managed environment counts "
                     "instances of one type, give an instance type such as ml.g5.xlarge");
    }
    if (!looks_like_instance_type(c.unit)) {
      return fail_at(l.field_path("capacityUnit"),
                     in_quotes(c.unit) +
                         " is not an instance type (expected ml.<family>.<size>, "
                         "e.g. ml.g5.xlarge)");
    }
    if (c.max < 1) {
      return fail_at(l.field_path("maxCapacity"), fmt::format("must be >= 1, got {}", c.max));
    }
    if (!seen.insert(c.unit).second) {
      return fail_at(l.field_path("capacityUnit"), in_quotes(c.unit) + " is listed twice");
    }
    note_unknown(l, warnings);
    out.push_back(std::move(c));
  }
  return out;
}

Result<EnvSpec> decode_env(const Json& body, const std::string& path, Json& doc,
                           std::vector<std::string>& w) {
  ObjectReader r(body, path);
  EnvSpec e;
  e.name = read_name(r, "serviceEnvironmentName");
  const std::string type = r.required_string("serviceEnvironmentType");
  if (r.ok() && type != kServiceType) {
    r.fail("serviceEnvironmentType",
           "only SAGEMAKER_TRAINING environments are supported, got " + in_quotes(type));
  }
  read_choice(r, doc, "state", {"ENABLED", "DISABLED"}, "ENABLED");
  e.clusters = r.optional_string_list("clusters").value_or(std::vector<std::string>{});
  read_aws_tags(r, "tags");
  GF_ASSIGN_OR_RETURN(e.limits, read_limits(r, 1, kMaxResources, w));
  if (!r.ok()) return r.status();
  note_unknown(r, w);
  return e;
}

Result<PolicySpec> decode_policy(const Json& body, const std::string& path, Json& doc,
                                 std::vector<std::string>& w) {
  ObjectReader r(body, path);
  PolicySpec p;
  p.name = read_name(r, "name");
  if (r.optional_value("fairsharePolicy")) {
    r.fail("fairsharePolicy",
           "not supported: quota-managed job queues use quotaSharePolicy "
           "(idleResourceAssignmentStrategy FIFO or FAIR_SHARE)");
  }
  const Json* qsp = r.optional_object("quotaSharePolicy");
  read_aws_tags(r, "tags");
  if (!r.ok()) return r.status();
  const Json empty = Json::object();
  ObjectReader q(qsp ? *qsp : empty, r.field_path("quotaSharePolicy"));
  Json& qdoc = doc["quotaSharePolicy"];
  if (!qdoc.is_object()) qdoc = Json::object();
  const std::string idle =
      read_choice(q, qdoc, "idleResourceAssignmentStrategy", {"FIFO", "FAIR_SHARE"}, "FIFO");
  if (!q.ok()) return q.status();
  p.idle = idle == "FAIR_SHARE" ? IdleStrategy::kFairShare : IdleStrategy::kFifo;
  note_unknown(q, w);
  note_unknown(r, w);
  return p;
}

Result<QueueSpec> decode_queue(const Json& body, const std::string& path, Json& doc,
                               std::vector<std::string>& w) {
  ObjectReader r(body, path);
  QueueSpec q;
  q.name = read_name(r, "jobQueueName");
  read_choice(r, doc, "jobQueueType", {kServiceType}, kServiceType);
  const int64_t priority = r.required_int("priority");
  if (r.ok() && priority < 0) r.fail("priority", fmt::format("must be >= 0, got {}", priority));
  q.state = read_choice(r, doc, "state", {"ENABLED", "DISABLED"}, "ENABLED");
  q.policy = name_from_arn(r.optional_string("schedulingPolicyArn").value_or(""));
  if (const Json* ceo = r.optional_value("computeEnvironmentOrder"); ceo && !ceo->empty()) {
    r.fail("computeEnvironmentOrder",
           "not supported: a quota-managed job queue uses "
           "serviceEnvironmentOrder");
  }
  const Json* order = r.optional_array("serviceEnvironmentOrder");
  read_aws_tags(r, "tags");
  if (!r.ok()) return r.status();
  const std::string field = r.field_path("serviceEnvironmentOrder");
  if (!order || order->size() != 1) {
    return fail_at(
        field, fmt::format("a quota-managed job queue has exactly one service environment, got {}",
                           order ? order->size() : 0));
  }
  ObjectReader o((*order)[0], path_index(field, 0));
  const int64_t n = o.required_int("order");
  if (o.ok() && n < 1) o.fail("order", fmt::format("must be >= 1, got {}", n));
  q.env = name_from_arn(o.required_string("serviceEnvironment"));
  if (!o.ok()) return o.status();
  note_unknown(o, w);
  note_unknown(r, w);
  return q;
}

Result<ShareSpec> decode_share(const Json& body, const std::string& path, Json& doc,
                               std::vector<std::string>& w) {
  ObjectReader r(body, path);
  ShareSpec s;
  s.name = read_name(r, "quotaShareName");
  s.queue = name_from_arn(r.required_string("jobQueue"));
  read_choice(r, doc, "state", {"ENABLED", "DISABLED"}, "ENABLED");
  read_aws_tags(r, "tags");
  GF_ASSIGN_OR_RETURN(s.limits, read_limits(r, 1, kMaxShareLimits, w));
  const Json* rsc = r.required_value("resourceSharingConfiguration");
  const Json* pc = r.optional_object("preemptionConfiguration");
  if (!r.ok()) return r.status();

  ObjectReader c(*rsc, r.field_path("resourceSharingConfiguration"));
  Json& cdoc = doc["resourceSharingConfiguration"];
  const std::string strategy = c.required_string("strategy");
  const auto borrow = c.optional_int("borrowLimit");
  if (c.ok() && strategy == "RESERVE")
    s.strategy = Strategy::kReserve;
  else if (c.ok() && strategy == "LEND")
    s.strategy = Strategy::kLend;
  else if (c.ok() && strategy == "LEND_AND_BORROW")
    s.strategy = Strategy::kLendAndBorrow;
  else if (c.ok())
    c.fail("strategy",
           "expected one of RESERVE, LEND, LEND_AND_BORROW, got " + in_quotes(strategy));
  if (c.ok() && borrow && s.strategy != Strategy::kLendAndBorrow) {
    c.fail("borrowLimit", "only allowed with strategy LEND_AND_BORROW, got " + strategy);
  }
  if (c.ok() && borrow && *borrow < -1) {
    c.fail("borrowLimit",
           fmt::format("must be -1 (unlimited) or a percentage >= 0, got {}", *borrow));
  }
  if (!c.ok()) return c.status();
  if (s.strategy == Strategy::kLendAndBorrow) {
    s.borrow_limit = borrow.value_or(-1);
    cdoc["borrowLimit"] = s.borrow_limit;
  }
  note_unknown(c, w);

  const Json empty = Json::object();
  ObjectReader p(pc ? *pc : empty, r.field_path("preemptionConfiguration"));
  Json& pdoc = doc["preemptionConfiguration"];
  if (!pdoc.is_object()) pdoc = Json::object();
  s.in_share_preemption =
      read_choice(p, pdoc, "inSharePreemption", {"ENABLED", "DISABLED"}, "DISABLED") == "ENABLED";
  if (!p.ok()) return p.status();
  note_unknown(p, w);
  note_unknown(r, w);
  return s;
}

// Runs `decode` for parsing: the normalized body (defaults filled) becomes the stored doc.
template <typename Spec, typename Decode>
Result<QuotaObject> parse_with(Kind kind, const Json& body, const std::string& path, Decode decode,
                               std::string Spec::*name) {
  QuotaObject obj;
  obj.doc = body;
  GF_ASSIGN_OR_RETURN(Spec spec, decode(body, path, obj.doc, obj.warnings));
  obj.key = ObjectKey{kind, "", spec.*name};
  return obj;
}

// Decodes every object of `kind` from its stored doc, keyed by name.
template <typename Spec, typename Decode>
Result<std::map<std::string, Spec, std::less<>>> decode_all(const ObjectMap& objects, Kind kind,
                                                            Decode decode) {
  std::map<std::string, Spec, std::less<>> out;
  for (const auto& [key, obj] : objects) {
    if (key.kind != kind) continue;
    Json scratch = obj.doc;
    std::vector<std::string> ignored;  // reported when the object was parsed
    Result<Spec> spec = decode(obj.doc, "", scratch, ignored);
    if (!spec.ok()) return spec.status().with_prefix(object_label(key));
    out.emplace(key.name, std::move(*spec));
  }
  return out;
}

JobQueueStatus queue_status(const QueueSpec& q, bool policy_found, bool env_found) {
  if (!env_found) return {q.state, "INVALID", "service environment " + q.env + " not found"};
  if (!q.policy.empty() && !policy_found) {
    return {q.state, "INVALID", "scheduling policy " + q.policy + " not found"};
  }
  return {q.state, "VALID", "JobQueue Healthy"};
}

std::optional<int64_t> share_borrowing(const ShareSpec& s, int64_t max) {
  switch (s.strategy) {
    case Strategy::kReserve:
    case Strategy::kLend:
      return 0;
    case Strategy::kLendAndBorrow:
      if (s.borrow_limit < 0) return std::nullopt;
      if (__builtin_mul_overflow(s.borrow_limit, max, &max)) return std::nullopt;
      return max / 100;
  }
  return 0;
}

class ShareCompiler {
 public:
  ShareCompiler(ResourceRegistry& registry, CompiledQuota& out) : registry_(registry), out_(out) {}

  Status run(const ObjectMap& objects) {
    GF_ASSIGN_OR_RETURN(envs_, decode_all<EnvSpec>(objects, Kind::kServiceEnvironment, decode_env));
    GF_ASSIGN_OR_RETURN(policies_,
                        decode_all<PolicySpec>(objects, Kind::kSchedulingPolicy, decode_policy));
    GF_ASSIGN_OR_RETURN(queues_, decode_all<QueueSpec>(objects, Kind::kJobQueue, decode_queue));
    GF_ASSIGN_OR_RETURN(auto shares,
                        decode_all<ShareSpec>(objects, Kind::kQuotaShare, decode_share));
    std::map<std::string, std::string, std::less<>> env_owner;
    for (const auto& [name, q] : queues_) {
      auto [it, fresh] = env_owner.emplace(q.env, name);
      if (!fresh) {
        return validation_error("JobQueue " + name +
                                ": serviceEnvironmentOrder[0].serviceEnvironment: service "
                                "environment " +
                                in_quotes(q.env) + " already belongs to quota-managed job queue " +
                                in_quotes(it->second));
      }
      GF_RETURN_IF_ERROR(add_queue(q));
    }
    std::map<std::string, size_t, std::less<>> per_queue;
    for (const auto& [name, s] : shares) {
      if (++per_queue[s.queue] > kMaxSharesPerQueue && queues_.contains(s.queue)) {
        return validation_error(
            fmt::format("JobQueue {}: has more than {} quota shares ({} is one too many)", s.queue,
                        kMaxSharesPerQueue, in_quotes(name)));
      }
      GF_RETURN_IF_ERROR(add_share(s));
    }
    return ok_status();
  }

 private:
  Status add_queue(const QueueSpec& q) {
    auto env = envs_.find(q.env);
    auto policy = policies_.find(q.policy);
    out_.job_queue_status[q.name] = queue_status(q, policy != policies_.end(), env != envs_.end());
    quota::NodeSpec spec;
    spec.name = "jobqueue:" + q.name;
    spec.kind = quota::NodeKind::kCohort;
    Result<quota::NodeId> id = add_node(out_, std::move(spec), all_dims());
    if (!id.ok()) return id.status().with_prefix("JobQueue " + q.name);
    roots_[q.name] = *id;
    if (policy != policies_.end()) out_.idle[*id] = policy->second.idle;
    auto& clusters = out_.environment_clusters[q.name];
    if (env == envs_.end()) return ok_status();
    clusters = env->second.clusters;
    ResourceVector ceiling;
    for (size_t i = 0; i < env->second.limits.size(); ++i) {
      const CapacityLimit& c = env->second.limits[i];
      Result<ResourceId> dim = registry_.intern(c.unit);
      if (!dim.ok()) {
        return dim.status().with_prefix("ServiceEnvironment " + env->first + ": " +
                                        path_index("capacityLimits", i) + ".capacityUnit");
      }
      ceiling.set(*dim, c.max);
    }
    out_.root_ceiling[*id] = ceiling;
    return ok_status();
  }

  Status add_share(const ShareSpec& s) {
    const std::string label = "QuotaShare " + s.name;
    auto root = roots_.find(s.queue);
    if (root == roots_.end()) {
      return validation_error(label + ": jobQueue: job queue " + in_quotes(s.queue) +
                              " does not exist");
    }
    const auto env = envs_.find(queues_.at(s.queue).env);
    quota::NodeSpec spec;
    spec.name = "share:" + s.queue + "/" + s.name;
    spec.kind = quota::NodeKind::kQueue;
    spec.parent = root->second;
    spec.preemption.reclaim = quota::ReclaimPolicy::kAny;
    spec.preemption.within_queue = s.in_share_preemption ? quota::WithinQueuePolicy::kLowerPriority
                                                         : quota::WithinQueuePolicy::kNever;
    for (size_t i = 0; i < s.limits.size(); ++i) {
      const CapacityLimit& c = s.limits[i];
      const std::string field = path_index("capacityLimits", i) + ".capacityUnit";
      if (env != envs_.end() &&
          std::none_of(env->second.limits.begin(), env->second.limits.end(),
                       [&c](const CapacityLimit& e) { return e.unit == c.unit; })) {
        return validation_error(label + ": " + field + ": " + in_quotes(c.unit) +
                                " is not in the capacityLimits of service environment " +
                                in_quotes(env->first));
      }
      Result<ResourceId> dim = registry_.intern(c.unit);
      if (!dim.ok()) return dim.status().with_prefix(label + ": " + field);
      quota::ResourceQuota q;
      q.resource = *dim;
      q.nominal = c.max;
      q.borrowing_limit = share_borrowing(s, c.max);
      if (s.strategy == Strategy::kReserve) q.lending_limit = 0;
      spec.quotas.push_back(q);
    }
    Result<quota::NodeId> id = add_node(out_, std::move(spec), all_dims());
    if (!id.ok()) return id.status().with_prefix(label);
    out_.share_leaf[{s.queue, s.name}] = *id;
    return ok_status();
  }

  ResourceRegistry& registry_;
  CompiledQuota& out_;
  std::map<std::string, EnvSpec, std::less<>> envs_;
  std::map<std::string, PolicySpec, std::less<>> policies_;
  std::map<std::string, QueueSpec, std::less<>> queues_;
  std::map<std::string, quota::NodeId, std::less<>> roots_;
};

}  // namespace

Result<QuotaObject> parse_service_environment_at(const Json& body, const std::string& path) {
  return parse_with<EnvSpec>(Kind::kServiceEnvironment, body, path, decode_env, &EnvSpec::name);
}
Result<QuotaObject> parse_scheduling_policy_at(const Json& body, const std::string& path) {
  return parse_with<PolicySpec>(Kind::kSchedulingPolicy, body, path, decode_policy,
                                &PolicySpec::name);
}
Result<QuotaObject> parse_job_queue_at(const Json& body, const std::string& path) {
  return parse_with<QueueSpec>(Kind::kJobQueue, body, path, decode_queue, &QueueSpec::name);
}
Result<QuotaObject> parse_quota_share_at(const Json& body, const std::string& path) {
  return parse_with<ShareSpec>(Kind::kQuotaShare, body, path, decode_share, &ShareSpec::name);
}

Status compile_quota_shares(const ObjectMap& objects, ResourceRegistry& registry,
                            CompiledQuota& out) {
  return ShareCompiler(registry, out).run(objects);
}

Status check_quota_share_apply(const ObjectMap& merged, const std::vector<QuotaObject>& incoming) {
  auto exists = [&merged](Kind kind, const std::string& name) {
    return merged.contains(ObjectKey{kind, "", name});
  };
  std::map<std::string, std::vector<std::string>, std::less<>> shares_of;  // queue -> share names
  std::map<std::string, std::string, std::less<>> env_of;                  // queue -> env
  for (const auto& [key, obj] : merged) {
    if (key.kind == Kind::kQuotaShare && obj.doc.contains("jobQueue") &&
        obj.doc["jobQueue"].is_string()) {
      shares_of[name_from_arn(obj.doc["jobQueue"].get<std::string>())].push_back(key.name);
    }
  }
  for (const QuotaObject& obj : incoming) {
    Json scratch = obj.doc;
    std::vector<std::string> ignored;
    if (obj.key.kind == Kind::kJobQueue) {
      GF_ASSIGN_OR_RETURN(QueueSpec q, decode_queue(obj.doc, "", scratch, ignored));
      for (const auto& [key, other] : merged) {
        if (key.kind != Kind::kJobQueue || key.name == q.name) continue;
        Json s2 = other.doc;
        Result<QueueSpec> o = decode_queue(other.doc, "", s2, ignored);
        if (o.ok() && o->env == q.env) {
          return validation_error(
              "JobQueue " + q.name +
              ": serviceEnvironmentOrder[0].serviceEnvironment: service "
              "environment " +
              in_quotes(q.env) + " already belongs to quota-managed job queue " +
              in_quotes(o->name) + " (one quota-managed queue per environment)");
        }
      }
    }
    if (obj.key.kind != Kind::kQuotaShare) continue;
    GF_ASSIGN_OR_RETURN(ShareSpec s, decode_share(obj.doc, "", scratch, ignored));
    const std::string label =
        "QuotaShare " + s.name + ": jobQueue: job queue " + in_quotes(s.queue);
    auto queue = merged.find(ObjectKey{Kind::kJobQueue, "", s.queue});
    if (queue == merged.end()) return validation_error(label + " does not exist");
    const auto& names = shares_of[s.queue];
    if (names.size() > kMaxSharesPerQueue) {
      return validation_error(
          fmt::format("{} would have {} quota shares; at most {} are allowed per job queue", label,
                      names.size(), kMaxSharesPerQueue));
    }
    Json s2 = queue->second.doc;
    GF_ASSIGN_OR_RETURN(QueueSpec q, decode_queue(queue->second.doc, "", s2, ignored));
    const JobQueueStatus st = queue_status(q, exists(Kind::kSchedulingPolicy, q.policy),
                                           exists(Kind::kServiceEnvironment, q.env));
    if (st.status != "VALID") {
      return validation_error(label + " is INVALID (" + st.status_reason +
                              "); quota shares need a VALID job queue");
    }
  }
  return ok_status();
}

}  // namespace detail

std::optional<JobQueueStatus> job_queue_status(const ObjectMap& objects, std::string_view name) {
  auto queue = objects.find(ObjectKey{Kind::kJobQueue, "", std::string(name)});
  if (queue == objects.end()) return std::nullopt;
  Json doc = queue->second.doc;
  std::vector<std::string> ignored;
  Result<detail::QueueSpec> q = detail::decode_queue(queue->second.doc, "", doc, ignored);
  if (!q.ok()) return JobQueueStatus{"", "INVALID", q.status().message()};
  auto exists = [&objects](Kind kind, const std::string& n) {
    return objects.contains(ObjectKey{kind, "", n});
  };
  return detail::queue_status(*q, exists(Kind::kSchedulingPolicy, q->policy),
                              exists(Kind::kServiceEnvironment, q->env));
}

bool is_quota_share_bundle(const Json& doc) {
  if (!doc.is_object() || doc.contains("kind") || doc.contains("apiVersion")) return false;
  auto is = [&doc](const char* key, bool array) {
    auto it = doc.find(key);
    return it != doc.end() && (array ? it->is_array() : it->is_object());
  };
  return is("quotaShares", true) || is("serviceEnvironment", false) ||
         is("schedulingPolicy", false) || is("jobQueue", false);
}

Result<std::vector<QuotaObject>> parse_quota_share_bundle(const Json& doc) {
  if (!is_quota_share_bundle(doc)) {
    return validation_error(
        "body: expected a quota-share bundle {serviceEnvironment, "
        "schedulingPolicy, jobQueue, quotaShares[]}");
  }
  ObjectReader r(doc, "");
  std::vector<QuotaObject> out;
  if (const Json* e = r.optional_object("serviceEnvironment")) {
    GF_ASSIGN_OR_RETURN(QuotaObject o,
                        detail::parse_service_environment_at(*e, "serviceEnvironment"));
    out.push_back(std::move(o));
  }
  if (const Json* p = r.optional_object("schedulingPolicy")) {
    GF_ASSIGN_OR_RETURN(QuotaObject o, detail::parse_scheduling_policy_at(*p, "schedulingPolicy"));
    out.push_back(std::move(o));
  }
  if (const Json* q = r.optional_object("jobQueue")) {
    GF_ASSIGN_OR_RETURN(QuotaObject o, detail::parse_job_queue_at(*q, "jobQueue"));
    out.push_back(std::move(o));
  }
  std::set<std::string, std::less<>> share_names;
  if (const Json* shares = r.optional_array("quotaShares")) {
    for (size_t i = 0; i < shares->size(); ++i) {
      const std::string field = path_index("quotaShares", i);
      GF_ASSIGN_OR_RETURN(QuotaObject o, detail::parse_quota_share_at((*shares)[i], field));
      if (!share_names.insert(o.key.name).second) {
        return validation_error(field + ".quotaShareName: duplicate quota share " +
                                detail::in_quotes(o.key.name));
      }
      out.push_back(std::move(o));
    }
  }
  if (!r.ok()) return r.status();
  std::vector<std::string> warnings;
  detail::note_unknown(r, warnings);
  if (!out.empty()) {
    out.front().warnings.insert(out.front().warnings.end(), warnings.begin(), warnings.end());
  }
  return out;
}

}  // namespace gf::frontend
