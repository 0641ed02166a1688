// Instance-level metering (docs/provisioning.md): one record per instance from lifecycle start
// (launch) to ShuttingDown. Money is integer micro-dollars; a price is per hour.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/json.h"
#include "core/time.h"

namespace gf {

struct BillingRecord {
  std::string instance_id;
  std::string cluster_name;
  std::string cluster_arn;
  std::string group;
  std::string instance_type;
  int64_t price_micros_per_hour = 0;
  Time start{};
  std::optional<Time> end;  // open while the instance lives

  // Cost of [start, min(end, until)], rounded down to the micro-dollar.
  int64_t cost_micros(Time until) const;
  Duration billed(Time until) const;
  Json to_json() const;
  static Result<BillingRecord> from_json(const Json& j);
};

// "12.345678" from micro-dollars.
std::string format_money(int64_t micros);

}  // namespace gf
