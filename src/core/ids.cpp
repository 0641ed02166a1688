#include "core/ids.h"

#include <cstdio>

#include "core/hash.h"

namespace gf {

std::string name_from_arn(std::string_view name_or_arn) {
  if (!name_or_arn.starts_with("arn:")) return std::string(name_or_arn);
  const size_t slash = name_or_arn.rfind('/');
  if (slash == std::string_view::npos) return std::string(name_or_arn);
  return std::string(name_or_arn.substr(slash + 1));
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

std::string instance_id(uint64_t seed, int64_t counter) {
  const uint64_t v = mix64(seed * 0x9e3779b97f4a7c15ULL + static_cast<uint64_t>(counter));
  char buf[32];
  std::snprintf(buf, sizeof buf, "i-%017llx",
                static_cast<unsigned long long>(v & 0x0fffffffffffffffULL) |
                    (static_cast<unsigned long long>(counter & 0xf) << 60));
  return std::string(buf, 19);
}

std::string cluster_id(uint64_t seed, int64_t counter) {
  static constexpr char kAlphabet[] = "abcdefghijklmnopqrstuvwxyz0123456789";
  uint64_t v = mix64(~seed + static_cast<uint64_t>(counter) * 0x632be59bd9b4e019ULL);
  std::string id;
  for (int i = 0; i < 10; ++i) {
    id.push_back(kAlphabet[v % 36]);
    v /= 36;
    if (v == 0) v = mix64(static_cast<uint64_t>(counter) + i + 1);
  }
  return id;
}

std::string job_id(int64_t counter, std::string_view name) {
  const uint64_t n = static_cast<uint64_t>(counter);
  uint64_t h1 = kFnv1aOffsetBasis ^ n;
  uint64_t h2 = 0x9e3779b97f4a7c15ULL + n;
  for (char c : name) {
    h1 = (h1 ^ static_cast<unsigned char>(c)) * kFnv1aPrime;
    h2 = (h2 ^ static_cast<unsigned char>(c)) * kFnv1aPrime + 7;
  }
  h1 = (h1 ^ n) * kFnv1aPrime;
  char buf[40];
  std::snprintf(buf, sizeof(buf), "%08x-%04x-4%03x-8%03x-%012llx", static_cast<unsigned>(h1 >> 32),
                static_cast<unsigned>((h1 >> 16) & 0xffff), static_cast<unsigned>(h1 & 0xfff),
                static_cast<unsigned>(h2 >> 52),
                static_cast<unsigned long long>(h2 & 0xffffffffffffULL));
  return buf;
}

std::string numbered_id(std::string_view prefix, int64_t n) {
  std::string digits = std::to_string(n);
  if (digits.size() < 6) digits.insert(0, 6 - digits.size(), '0');
  return std::string(prefix) + "-" + digits;
}

std::string event_id(int64_t seq, int index) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "ev-%012lld-%d", static_cast<long long>(seq), index);
  return buf;
}

}  // namespace gf
