// SageMaker's awsJson1_1 protocol for the HyperPod cluster operations (docs/aws-compatibility.md):
// `POST /` with `X-Amz-Target: SageMaker.<Operation>` and a JSON body; the answer is JSON with
// timestamps as epoch seconds, an error is `{"__type": "<Code>", "message": ...}` with its status.
#include <fmt/format.h>

#include "api/aws/protocol.h"

namespace gf::aws {
namespace {

constexpr std::string_view kTargetPrefix = "SageMaker.";
constexpr int64_t kMaxResults = 100;  // SageMaker's limit for every list here

using Op = std::function<HttpResponse(Api&, const HttpRequest&, const Json&)>;

HttpResponse unknown_operation(const std::string& message) {
  HttpResponse r =
      json_response(400, Json{{"__type", "UnknownOperationException"}, {"message", message}});
  r.error_type = "UnknownOperationException";
  r.headers["x-amzn-ErrorType"] = r.error_type;
  return r;
}

// A successful answer as the SDK reads it: timestamps as epoch seconds.
HttpResponse answer(Json body) {
  iso_times_to_epoch(body);
  return json_response(200, body);
}

HttpResponse fail(const Status& st) { return error_response(st); }

// ClusterName: a name, or the ARN DescribeCluster answered (resolved through ListClusters).
Result<std::string> cluster_name(Api& api, const HttpRequest& req, const Json& in) {
  GF_ASSIGN_OR_RETURN(std::string given, string_field(in, "ClusterName", true));
  if (given.rfind("arn:", 0) == 0) {
    Answer all = call(api, req, Inner{"GET", "/v1/clusters", {}, {}});
    if (all.ok()) {
      for (const Json& c : all.body.value("ClusterSummaries", Json::array())) {
        if (c.value("ClusterArn", "") == given) return c.value("ClusterName", "");
      }
    }
    return not_found_error("cluster \"" + printable(given, 200) + "\" not found");
  }
  GF_RETURN_IF_ERROR(check_segment(given, "ClusterName"));
  return given;
}

// The query of a list call: its timestamps as ISO 8601, its strings as they are.
Result<std::map<std::string, std::string>> list_query(const Json& in,
                                                      std::initializer_list<const char*> times,
                                                      std::initializer_list<const char*> strings) {
  std::map<std::string, std::string> q;
  for (const char* f : times) {
    if (auto it = in.find(f); it != in.end() && !it->is_null()) {
      GF_ASSIGN_OR_RETURN(q[f], epoch_to_iso(*it, f));
    }
  }
  for (const char* f : strings) {
    GF_ASSIGN_OR_RETURN(std::string v, string_field(in, f, false));
    if (!v.empty()) q[f] = v;
  }
  return q;
}

// `in` without the fields that went into the path.
Json body_without(Json in, std::initializer_list<const char*> fields) {
  for (const char* f : fields) in.erase(f);
  return in;
}

HttpResponse run(Api& api, const HttpRequest& req, Inner inner) {
  Answer a = call(api, req, std::move(inner));
  if (!a.ok()) return a.response;
  return answer(std::move(a.body));
}

HttpResponse create_cluster(Api& api, const HttpRequest& req, const Json& in) {
  if (auto name = string_field(in, "ClusterName", true); !name.ok()) return fail(name.status());
  // Members SageMaker models but gpufleet does not (Tags, ClusterRole, ...) are accepted and
  // listed back as Warnings.
  return run(api, req, Inner{"POST", "/v1/clusters", {{"fieldValidation", "Warn"}}, in});
}

HttpResponse describe_cluster(Api& api, const HttpRequest& req, const Json& in) {
  auto name = cluster_name(api, req, in);
  if (!name.ok()) return fail(name.status());
  return run(api, req, Inner{"GET", "/v1/clusters/" + *name, {}, {}});
}

HttpResponse list_clusters(Api& api, const HttpRequest& req, const Json& in) {
  auto q = list_query(in, {"CreationTimeAfter", "CreationTimeBefore"},
                      {"NameContains", "SortBy", "SortOrder"});
  if (!q.ok()) return fail(q.status());
  Answer a = call(api, req, Inner{"GET", "/v1/clusters", *q, {}});
  if (!a.ok()) return a.response;
  if (Status st = page(a.body, "ClusterSummaries", in, "MaxResults", "NextToken", kMaxResults,
                       [](const Json& c) { return c.value("ClusterName", ""); });
      !st.ok())
    return fail(st);
  return answer(std::move(a.body));
}

HttpResponse update_cluster(Api& api, const HttpRequest& req, const Json& in) {
  auto name = cluster_name(api, req, in);
  if (!name.ok()) return fail(name.status());
  return run(api, req,
             Inner{"PUT",
                   "/v1/clusters/" + *name,
                   {{"fieldValidation", "Warn"}},
                   body_without(in, {"ClusterName"})});
}

HttpResponse delete_cluster(Api& api, const HttpRequest& req, const Json& in) {
  auto name = cluster_name(api, req, in);
  if (!name.ok()) return fail(name.status());
  return run(api, req, Inner{"DELETE", "/v1/clusters/" + *name, {}, {}});
}

HttpResponse list_cluster_nodes(Api& api, const HttpRequest& req, const Json& in) {
  auto name = cluster_name(api, req, in);
  if (!name.ok()) return fail(name.status());
  auto q = list_query(in, {"CreationTimeAfter", "CreationTimeBefore"},
                      {"InstanceGroupNameContains", "SortBy", "SortOrder"});
  if (!q.ok()) return fail(q.status());
  Answer a = call(api, req, Inner{"GET", "/v1/clusters/" + *name + "/nodes", *q, {}});
  if (!a.ok()) return a.response;
  if (Status st = page(a.body, "ClusterNodeSummaries", in, "MaxResults", "NextToken", kMaxResults,
                       [](const Json& n) { return n.value("InstanceId", ""); });
      !st.ok())
    return fail(st);
  return answer(std::move(a.body));
}

HttpResponse describe_cluster_node(Api& api, const HttpRequest& req, const Json& in) {
  auto name = cluster_name(api, req, in);
  if (!name.ok()) return fail(name.status());
  auto logical = string_field(in, "NodeLogicalId", false);
  if (!logical.ok()) return fail(logical.status());
  if (!logical->empty())
    return fail(validation_error(
        "NodeLogicalId: gpufleet names nodes by instance id only; give NodeId instead"));
  auto node = string_field(in, "NodeId", true);
  if (!node.ok()) return fail(node.status());
  if (Status st = check_segment(*node, "NodeId"); !st.ok()) return fail(st);
  return run(api, req, Inner{"GET", "/v1/clusters/" + *name + "/nodes/" + *node, {}, {}});
}

HttpResponse batch_delete_nodes(Api& api, const HttpRequest& req, const Json& in) {
  auto name = cluster_name(api, req, in);
  if (!name.ok()) return fail(name.status());
  if (auto it = in.find("NodeLogicalIds"); it != in.end() && it->is_array() && !it->empty())
    return fail(validation_error(
        "NodeLogicalIds: gpufleet names nodes by instance id only; give NodeIds instead"));
  return run(api, req,
             Inner{"POST",
                   "/v1/clusters/" + *name + "/nodes/batch-delete",
                   {},
                   body_without(in, {"ClusterName", "NodeLogicalIds"})});
}

HttpResponse batch_add_nodes(Api& api, const HttpRequest& req, const Json& in) {
  auto name = cluster_name(api, req, in);
  if (!name.ok()) return fail(name.status());
  return run(api, req,
             Inner{"POST",
                   "/v1/clusters/" + *name + "/nodes/batch-add",
                   {},
                   body_without(in, {"ClusterName"})});
}

HttpResponse list_cluster_events(Api& api, const HttpRequest& req, const Json& in) {
  auto name = cluster_name(api, req, in);
  if (!name.ok()) return fail(name.status());
  auto q = list_query(in, {"EventTimeAfter", "EventTimeBefore"},
                      {"InstanceGroupName", "NodeId", "ResourceType", "NextToken"});
  if (!q.ok()) return fail(q.status());
  auto order = string_field(in, "SortOrder", false);
  if (!order.ok()) return fail(order.status());
  if (!order->empty() && *order != "Descending")
    return fail(
        validation_error("SortOrder: events are listed newest first (Descending) only, got \"" +
                         printable(*order, 40) + "\""));
  if (auto it = in.find("MaxResults"); it != in.end() && !it->is_null()) {
    if (!it->is_number_integer())
      return fail(
          validation_error("MaxResults: expected an integer, got " + describe_json_value(*it)));
    (*q)["MaxResults"] = std::to_string(it->get<int64_t>());
  }
  return run(api, req, Inner{"GET", "/v1/clusters/" + *name + "/events", *q, {}});
}

HttpResponse describe_cluster_event(Api& api, const HttpRequest& req, const Json& in) {
  auto name = cluster_name(api, req, in);
  if (!name.ok()) return fail(name.status());
  auto id = string_field(in, "EventId", true);
  if (!id.ok()) return fail(id.status());
  if (Status st = check_segment(*id, "EventId"); !st.ok()) return fail(st);
  Answer a = call(api, req, Inner{"GET", "/v1/clusters/" + *name + "/events/" + *id, {}, {}});
  if (!a.ok()) return a.response;
  return answer(Json{{"EventDetails", std::move(a.body)}});
}

HttpResponse update_cluster_software(Api& api, const HttpRequest& req, const Json& in) {
  auto name = cluster_name(api, req, in);
  if (!name.ok()) return fail(name.status());
  return run(api, req,
             Inner{"POST",
                   "/v1/clusters/" + *name + "/software-update",
                   {},
                   body_without(in, {"ClusterName"})});
}

const std::map<std::string, Op, std::less<>>& operations() {
  static const std::map<std::string, Op, std::less<>> ops = {
      {"CreateCluster", create_cluster},
      {"DescribeCluster", describe_cluster},
      {"ListClusters", list_clusters},
      {"UpdateCluster", update_cluster},
      {"DeleteCluster", delete_cluster},
      {"ListClusterNodes", list_cluster_nodes},
      {"DescribeClusterNode", describe_cluster_node},
      {"BatchDeleteClusterNodes", batch_delete_nodes},
      {"BatchAddClusterNodes", batch_add_nodes},
      {"ListClusterEvents", list_cluster_events},
      {"DescribeClusterEvent", describe_cluster_event},
      {"UpdateClusterSoftware", update_cluster_software},
  };
  return ops;
}

HttpResponse door(Api& api, const HttpRequest& req) {
  const std::string target = req.header_or("x-amz-target", "");
  if (target.empty()) {
    return fail(validation_error(
        "X-Amz-Target: required on POST / (SageMaker.<Operation>, as the AWS SDKs send it; "
        "gpufleet's own API is under /v1/)"));
  }
  const std::string_view t(target);
  if (t.substr(0, kTargetPrefix.size()) != kTargetPrefix) {
    return unknown_operation("X-Amz-Target: \"" + printable(target, 80) +
                             "\" is not a SageMaker operation (SageMaker.<Operation>)");
  }
  const std::string_view op_name = t.substr(kTargetPrefix.size());
  auto it = operations().find(op_name);
  if (it == operations().end()) {
    return unknown_operation(
        "gpufleet does not implement SageMaker." + printable(op_name, 80) +
        "; it implements the HyperPod cluster operations (docs/aws-compatibility.md)");
  }
  api.door_call(target, !is_read_operation(op_name));
  auto in = read_input(req);
  HttpResponse r = in.ok() ? it->second(api, req, *in) : fail(in.status());
  r.content_type = "application/x-amz-json-1.1";
  return r;
}

}  // namespace

void register_sagemaker(Api& api) {
  api.router().add_door("POST", "/", [&api](const HttpRequest& req) { return door(api, req); });
}

}  // namespace gf::aws
