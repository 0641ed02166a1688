// Rules of the typed job events beyond their fields (job_events.h).
#include "state/job_events.h"

#include "core/json_diff.h"

namespace gf::job_events {

Status Finished::check() const {
  if (!is_terminal(status))
    return internal_error(fmt::format("status {} is not an end", to_string(status)));
  return ok_status();
}

const Json& submitted_job_base() {
  static const Json base = [] {
    Job job;
    job.dispatch.emplace();
    return job.to_json();
  }();
  return base;
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

Event to_event(Submitted e, std::string idempotency_key) {
  Event out{std::string(Submitted::kType), Json::object(), std::move(idempotency_key), nullptr};
  out.job = std::make_shared<Job>(std::move(e.job));
  return out;
}

}  // namespace gf::job_events

namespace gf::event_codec {

Json Codec<Job>::put(const Job& job) {
  return json_minus(job_events::submitted_job_base(), job.to_json());
}

void Codec<Job>::take(const Json& j, Job& out) {
  if (!j.is_object()) throw Malformed(fmt::format("expected an object, got {}", j.type_name()));
  Result<Job> job = Job::from_json(json_overlay(job_events::submitted_job_base(), j));
  if (!job.ok()) throw Malformed(job.status().message());
  out = std::move(*job);
}

}  // namespace gf::event_codec

namespace gf {

Json Event::payload_json() const {
  if (!job) return payload;
  return event_codec::to_json(job_events::Submitted{*job});
}

}  // namespace gf
