// The quota front ends (frontend/quota_objects.h): ElasticQuotaTree, Kueue's kinds
// (ResourceFlavor, Cohort, ClusterQueue, LocalQueue, WorkloadPriorityClass) and AWS Batch quota
// shares (ServiceEnvironment, SchedulingPolicy, JobQueue, QuotaShare, and the bundle of
// examples/quota-shares.json), each parsed on its own and then compiled together, as POST
// /v1/apply and the AWS-shaped POST routes do. The input is one or more documents; a document
// without apiVersion/kind goes to every AWS parser.
//
// Invariants checked:
//  - no parser, compile or check_apply throws, and a refusal says why;
//  - an accepted object has a name, a namespace exactly when its kind is namespaced, and a kind
//    whose plural maps back to it;
//  - its stored document (what the state journals and re-parses on replay) is accepted again
//    by the same parser and gives the same key and the same document;
//  - what check_apply accepts, compile accepts (check_apply is compile's rules plus more);
//  - a compiled graph is well formed: parents precede children, names find their node, the
//    per-node tables cover every node, and every lookup table points at a queue.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/resources.h"
#include "fuzz_support.h"
#include "quota/frontends/quota_objects.h"

namespace gf::frontend {
namespace {

using Parser = std::function<Result<QuotaObject>(const Json&)>;

struct Accepted {
  QuotaObject object;
  Parser parser;  // the one that accepted it, to re-read its stored form
};

void check_object(const Accepted& a) {
  const QuotaObject& o = a.object;
  FUZZ_CHECK(!o.key.name.empty(), fuzz::dump(o.doc));
  FUZZ_CHECK(namespaced(o.key.kind) == !o.key.ns.empty(),
             std::string(kind_name(o.key.kind)) + " namespace '" + o.key.ns + "'");
  FUZZ_CHECK(kind_from_plural(kind_plural(o.key.kind)) == o.key.kind,
             std::string(kind_plural(o.key.kind)));
  const Result<QuotaObject> again = a.parser(o.doc);
  FUZZ_CHECK(again.ok(),
             "stored document refused: " + again.status().to_string() + "\n" + fuzz::dump(o.doc));
  FUZZ_CHECK(again->key == o.key, again->key.name + " vs " + o.key.name);
  FUZZ_CHECK(again->doc == o.doc, fuzz::dump(o.doc) + "\nbecame\n" + fuzz::dump(again->doc));
}

void check_compiled(const CompiledQuota& c) {
  const quota::QuotaGraph& g = c.graph;
  for (quota::NodeId id = 0; id < g.size(); ++id) {
    const quota::NodeId parent = g.parent(id);
    FUZZ_CHECK(parent == quota::kNoNode || parent < id, g.spec(id).name);
    FUZZ_CHECK(g.find(g.spec(id).name) == id, g.spec(id).name);
    FUZZ_CHECK(g.root(id) < g.size(), g.spec(id).name);
  }
  FUZZ_CHECK(
      c.charged.size() == g.size() && c.flavors.size() == g.size() && c.idle.size() == g.size(),
      std::to_string(g.size()));
  auto check_leaf = [&](quota::NodeId id, const std::string& what) {
    FUZZ_CHECK(id < g.size() && g.is_queue(id), what);
  };
  for (const auto& [ns, id] : c.namespace_leaf) check_leaf(id, "namespace " + ns);
  for (const auto& [lq, id] : c.local_queue_leaf) check_leaf(id, "local queue " + lq);
  for (const auto& [key, id] : c.share_leaf) check_leaf(id, "share " + key.second);
  for (const QueueObject& q : c.queues) FUZZ_CHECK(q.node < g.size(), q.name);
}

// The AWS parser of a bundle member's kind: the bundle stores each member as its own body.
Parser aws_parser(Kind kind) {
  switch (kind) {
    case Kind::kServiceEnvironment:
      return parse_service_environment;
    case Kind::kSchedulingPolicy:
      return parse_scheduling_policy;
    case Kind::kJobQueue:
      return parse_job_queue;
    default:
      return parse_quota_share;
  }
}

void collect(const Json& doc, std::vector<Accepted>& out) {
  auto take = [&](const Result<QuotaObject>& r, Parser parser) {
    if (r.ok()) {
      out.push_back({*r, std::move(parser)});
    } else {
      FUZZ_CHECK_ERROR(r.status());
    }
  };
  if (is_quota_share_bundle(doc)) {
    const Result<std::vector<QuotaObject>> bundle = parse_quota_share_bundle(doc);
    if (!bundle.ok()) {
      FUZZ_CHECK_ERROR(bundle.status());
      return;
    }
    for (const QuotaObject& o : *bundle) out.push_back({o, aws_parser(o.key.kind)});
    return;
  }
  const bool typed = doc.is_object() && doc.contains("apiVersion") && doc.contains("kind") &&
                     doc["apiVersion"].is_string() && doc["kind"].is_string();
  if (typed) {
    if (is_k8s_quota_kind(doc["apiVersion"].get<std::string>(), doc["kind"].get<std::string>())) {
      take(parse_k8s_object(doc), parse_k8s_object);
    }
    return;
  }
  take(parse_service_environment(doc), parse_service_environment);
  take(parse_scheduling_policy(doc), parse_scheduling_policy);
  take(parse_job_queue(doc), parse_job_queue);
  take(parse_quota_share(doc), parse_quota_share);
}

}  // namespace
}  // namespace gf::frontend

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gf::frontend;  // NOLINT(google-build-using-namespace): one file, one namespace
  if (size > gf::fuzz::kMaxInputBytes) return -1;
  const gf::Result<std::vector<gf::Json>> docs = gf::parse_documents(gf::fuzz::as_text(data, size));
  if (!docs.ok()) return 0;
  std::vector<Accepted> accepted;
  for (const gf::Json& doc : *docs) collect(doc, accepted);
  if (accepted.empty()) return 0;

  std::vector<QuotaObject> incoming;
  ObjectMap objects;
  for (const Accepted& a : accepted) {
    check_object(a);
    incoming.push_back(a.object);
    objects.insert_or_assign(a.object.key, a.object);
  }
  gf::ResourceRegistry check_registry;
  const gf::Status applies = check_apply(ObjectMap{}, incoming, check_registry);
  if (!applies.ok()) FUZZ_CHECK_ERROR(applies);
  gf::ResourceRegistry registry;
  const gf::Result<CompiledQuota> compiled = compile(objects, registry);
  if (!compiled.ok()) {
    FUZZ_CHECK_ERROR(compiled.status());
    FUZZ_CHECK(!applies.ok(),
               "check_apply accepted what compile refuses: " + compiled.status().to_string());
    return 0;
  }
  check_compiled(*compiled);
  return 0;
}
