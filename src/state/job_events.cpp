// Codecs of the typed job events (job_events.h).
#include "state/job_events.h"

namespace gf::job_events {
namespace {

Json with_version(Json j) {
  j["v"] = kVersion;
  return j;
}

// Runs `read` over the payload of a `type` event: a missing or mistyped field, or a version
// newer than this release, is an error naming the event type.
template <typename T, typename Read>
Result<T> read_payload(const Json& p, Read read) {
  const std::string type(T::kType);
  if (!p.is_object()) return internal_error(type + ": payload is not an object");
  try {
    if (p.contains("v")) {
      const int v = p.at("v").get<int>();
      if (v < 1 || v > kVersion) {
        return internal_error(type + ": event version " + std::to_string(v) +
                              " (this release reads up to " + std::to_string(kVersion) +
                              "; journal written by a newer gpufleet?)");
      }
    }
    T e;
    GF_RETURN_IF_ERROR(read(p, e));
    return e;
  } catch (const Json::exception& ex) {
    return internal_error(type + ": " + ex.what());
  }
}

Time micros(const Json& p, const char* key) { return from_micros(p.at(key).get<int64_t>()); }

}  // namespace

Json to_json(const Submitted& e) { return with_version({{"job", e.job.to_json()}}); }
Json to_json(const Admitted& e) {
  return with_version({{"id", e.id},
                       {"alternative", e.alternative},
                       {"cluster", e.cluster},
                       {"nodes", e.nodes},
                       {"borrowing", e.borrowing},
                       {"replaced", e.replaced}});
}
Json to_json(const Running& e) { return with_version({{"id", e.id}}); }
Json to_json(const Preempted& e) {
  return with_version({{"id", e.id},
                       {"by", e.by},
                       {"rule", e.rule},
                       {"message", e.message},
                       {"until_us", to_micros(e.until)},
                       {"terminated", e.terminated}});
}
Json to_json(const Interrupted& e) {
  return with_version({{"id", e.id}, {"node", e.node}, {"message", e.message}});
}
Json to_json(const Finished& e) {
  return with_version(
      {{"id", e.id}, {"status", std::string(to_string(e.status))}, {"reason", e.reason}});
}
Json to_json(const PriorityChanged& e) {
  return with_version({{"id", e.id}, {"priority", e.priority}});
}
Json to_json(const Waiting& e) {
  return with_version({{"id", e.id}, {"waiting", e.waiting.to_json()}});
}
Json to_json(const Failover& e) {
  return with_version(
      {{"id", e.id}, {"from", e.from}, {"purge_mode", e.purge_mode}, {"message", e.message}});
}
Json to_json(const CopyPurged& e) {
  return with_version({{"id", e.id}, {"cluster", e.cluster}, {"reason", e.reason}});
}
Json to_json(const Suspend& e) { return with_version({{"id", e.id}, {"suspend", e.suspend}}); }
Json to_json(const Deleted& e) { return with_version({{"id", e.id}, {"reason", e.reason}}); }

template <>
Result<Submitted> decode(const Json& p) {
  return read_payload<Submitted>(p, [](const Json& j, Submitted& e) -> Status {
    GF_ASSIGN_OR_RETURN(e.job, Job::from_json(j.at("job")));
    return ok_status();
  });
}
template <>
Result<Admitted> decode(const Json& p) {
  return read_payload<Admitted>(p, [](const Json& j, Admitted& e) -> Status {
    e.id = j.at("id").get<std::string>();
    e.alternative = j.at("alternative").get<int32_t>();
    e.cluster = j.at("cluster").get<std::string>();
    e.nodes = j.at("nodes").get<std::vector<std::string>>();
    e.borrowing = j.at("borrowing").get<bool>();
    e.replaced = j.at("replaced").get<bool>();
    return ok_status();
  });
}
template <>
Result<Running> decode(const Json& p) {
  return read_payload<Running>(p, [](const Json& j, Running& e) -> Status {
    e.id = j.at("id").get<std::string>();
    return ok_status();
  });
}
template <>
Result<Preempted> decode(const Json& p) {
  return read_payload<Preempted>(p, [](const Json& j, Preempted& e) -> Status {
    e.id = j.at("id").get<std::string>();
    e.by = j.at("by").get<std::string>();
    e.rule = j.at("rule").get<std::string>();
    e.message = j.at("message").get<std::string>();
    e.until = micros(j, "until_us");
    e.terminated = j.at("terminated").get<bool>();
    return ok_status();
  });
}
template <>
Result<Interrupted> decode(const Json& p) {
  return read_payload<Interrupted>(p, [](const Json& j, Interrupted& e) -> Status {
    e.id = j.at("id").get<std::string>();
    e.node = j.at("node").get<std::string>();
    e.message = j.at("message").get<std::string>();
    return ok_status();
  });
}
template <>
Result<Finished> decode(const Json& p) {
  return read_payload<Finished>(p, [](const Json& j, Finished& e) -> Status {
    e.id = j.at("id").get<std::string>();
    const std::string status = j.at("status").get<std::string>();
    const std::optional<JobStatus> st = parse_job_status(status);
    if (!st || !is_terminal(*st)) return internal_error("status " + status + " is not an end");
    e.status = *st;
    e.reason = j.at("reason").get<std::string>();
    return ok_status();
  });
}
template <>
Result<PriorityChanged> decode(const Json& p) {
  return read_payload<PriorityChanged>(p, [](const Json& j, PriorityChanged& e) -> Status {
    e.id = j.at("id").get<std::string>();
    e.priority = j.at("priority").get<int32_t>();
    return ok_status();
  });
}
template <>
Result<Waiting> decode(const Json& p) {
  return read_payload<Waiting>(p, [](const Json& j, Waiting& e) -> Status {
    e.id = j.at("id").get<std::string>();
    GF_ASSIGN_OR_RETURN(e.waiting, JobWait::from_json(j.at("waiting")));
    return ok_status();
  });
}
template <>
Result<Failover> decode(const Json& p) {
  return read_payload<Failover>(p, [](const Json& j, Failover& e) -> Status {
    e.id = j.at("id").get<std::string>();
    e.from = j.at("from").get<std::string>();
    e.purge_mode = j.at("purge_mode").get<std::string>();
    e.message = j.at("message").get<std::string>();
    return ok_status();
  });
}
template <>
Result<CopyPurged> decode(const Json& p) {
  return read_payload<CopyPurged>(p, [](const Json& j, CopyPurged& e) -> Status {
    e.id = j.at("id").get<std::string>();
    e.cluster = j.at("cluster").get<std::string>();
    e.reason = j.at("reason").get<std::string>();
    return ok_status();
  });
}
template <>
Result<Suspend> decode(const Json& p) {
  return read_payload<Suspend>(p, [](const Json& j, Suspend& e) -> Status {
    e.id = j.at("id").get<std::string>();
    e.suspend = j.at("suspend").get<bool>();
    return ok_status();
  });
}
template <>
Result<Deleted> decode(const Json& p) {
  return read_payload<Deleted>(p, [](const Json& j, Deleted& e) -> Status {
    e.id = j.at("id").get<std::string>();
    e.reason = j.at("reason").get<std::string>();
    return ok_status();
  });
}

std::string job_id_of(std::string_view type, const Json& payload) {
  if (!payload.is_object()) return "";
  if (type == Submitted::kType) {
    auto job = payload.find("job");
    if (job == payload.end() || !job->is_object()) return "";
    auto id = job->find("id");
    return id != job->end() && id->is_string() ? id->get<std::string>() : "";
  }
  auto id = payload.find("id");
  return id != payload.end() && id->is_string() ? id->get<std::string>() : "";
}

}  // namespace gf::job_events
