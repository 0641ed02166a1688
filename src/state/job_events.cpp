// Rules of the typed job events beyond their fields (job_events.h).
#include "state/job_events.h"

namespace gf::job_events {

Status Finished::check() const {
  if (!is_terminal(status))
    return internal_error(fmt::format("status {} is not an end", to_string(status)));
  return ok_status();
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

namespace gf {

Json Event::payload_json() const {
  if (!job) return payload;
  return event_codec::to_json(job_events::Submitted{*job});
}

}  // namespace gf
