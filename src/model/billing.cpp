#include "model/billing.h"

#include <cstdio>

namespace gf {

Duration BillingRecord::billed(Time until) const {
  Time stop = end && *end < until ? *end : until;
  if (stop <= start) return Duration(0);
  return stop - start;
}

int64_t BillingRecord::cost_micros(Time until) const {
  const __int128 us = billed(until).count();
  return static_cast<int64_t>(us * price_micros_per_hour / 3'600'000'000LL);
}

std::string format_money(int64_t micros) {
  char buf[48];
  const char* sign = micros < 0 ? "-" : "";
  uint64_t m =
      micros < 0 ? static_cast<uint64_t>(-(micros + 1)) + 1 : static_cast<uint64_t>(micros);
  std::snprintf(buf, sizeof buf, "%s%llu.%06llu", sign,
                static_cast<unsigned long long>(m / 1000000),
                static_cast<unsigned long long>(m % 1000000));
  return buf;
}

Json BillingRecord::to_json() const {
  Json j = {{"InstanceId", instance_id},     {"ClusterName", cluster_name},
            {"ClusterArn", cluster_arn},     {"InstanceGroupName", group},
            {"InstanceType", instance_type}, {"PriceMicrosPerHour", price_micros_per_hour},
            {"StartUs", to_micros(start)}};
  if (end) j["EndUs"] = to_micros(*end);
  return j;
}

Result<BillingRecord> BillingRecord::from_json(const Json& j) {
  ObjectReader r(j, "billing");
  BillingRecord b;
  b.instance_id = r.required_string("InstanceId");
  b.cluster_name = r.required_string("ClusterName");
  b.cluster_arn = r.required_string("ClusterArn");
  b.group = r.required_string("InstanceGroupName");
  b.instance_type = r.required_string("InstanceType");
  b.price_micros_per_hour = r.required_int("PriceMicrosPerHour");
  b.start = from_micros(r.required_int("StartUs"));
  if (auto e = r.optional_int("EndUs")) b.end = from_micros(*e);
  if (!r.ok()) return r.status();
  return b;
}

}  // namespace gf
