// Resource vectors the scheduler tests build nodes and pods from.
#pragma once

#include "core/resources.h"

namespace gf::sched::testing {

// One pod asking for `gpus` GPUs and `cpu_milli` CPU.
inline ResourceVector gpu_pod(int64_t gpus, int64_t cpu_milli = 1000) {
  ResourceVector v;
  v.set(kGpu, gpus);
  v.set(kCpu, cpu_milli);
  v.set(kPods, 1);
  return v;
}

// A node with `gpus` GPUs and the CPU, memory and pod room of a p5.48xlarge.
inline ResourceVector node_capacity(int64_t gpus) {
  ResourceVector v;
  v.set(kGpu, gpus);
  v.set(kCpu, 192000);
  v.set(kMemory, int64_t{2048} << 30);
  v.set(kPods, 110);
  return v;
}

inline ResourceVector gpus(int64_t n) {
  ResourceVector v;
  v.set(kGpu, n);
  return v;
}

}  // namespace gf::sched::testing
