#include "core/ids.h"

#include <cstdio>

namespace gf {

std::string random_lower_alnum(Random& rng, int n) {
  static constexpr char kAlphabet[] = "abcdefghijklmnopqrstuvwxyz0123456789";
  std::string out;
  out.reserve(n);
  for (int i = 0; i < n; ++i) out.push_back(kAlphabet[rng.uniform(sizeof(kAlphabet) - 1)]);
  return out;
}

std::string make_arn(const ArnConfig& cfg, std::string_view resource_type, std::string_view id) {
  std::string arn = "arn:gpufleet:";
  arn += cfg.region;
  arn += ':';
  arn += cfg.account;
  arn += ':';
  arn += resource_type;
  arn += '/';
  arn += id;
  return arn;
}

std::string new_cluster_id(Random& rng) { return random_lower_alnum(rng, 10); }

std::string event_id(int64_t seq, int index) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "ev-%012lld-%d", static_cast<long long>(seq), index);
  return buf;
}

}  // namespace gf
