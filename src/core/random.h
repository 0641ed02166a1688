// Seeded randomness. One generator is owned by the control loop and passed by reference to what
// needs it (backoff jitter, simulated faults); the same seed gives the same run.
#pragma once

#include <cstdint>

namespace gf {

// A seed from the operating system's entropy, for a server started without --seed (so two
// installations do not name their first cluster alike). Everything else derives from the seed.
uint64_t entropy_seed();

class Random {
 public:
  explicit Random(uint64_t seed);

  uint64_t next_u64();
  // Uniform in [0, bound); bound > 0. Unbiased (rejection sampling).
  uint64_t uniform(uint64_t bound);
  // Uniform in [lo, hi]; lo <= hi.
  int64_t uniform_range(int64_t lo, int64_t hi);
  // Uniform in [0, 1).
  double uniform_unit();
  uint64_t seed() const { return seed_; }

 private:
  uint64_t seed_;
  uint64_t s_[4];  // xoshiro256** state
};

}  // namespace gf
