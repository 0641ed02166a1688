// Resource names interned to dense ids, and fixed-size integer resource vectors indexed by them
// (the shape of Ray's scheduling_ids.h / fixed_point.h). The scheduler's inner loops compare
// arrays of int64, never string maps or doubles.
//
// Units, per resource scale (core/quantity.h): cpu is in millicores (QuantityScale::kMilli);
// every other resource is in whole units of its kind (kUnit): memory in bytes, nvidia.com/gpu in
// GPUs, kube-queue/max-jobs in jobs, pods in pods, instance types (ml.g5.xlarge) in instances.
#pragma once

#include <array>
#include <atomic>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "core/quantity.h"
#include "core/result.h"

namespace gf {

using ResourceId = uint16_t;

// The hard limit on distinct resource names per registry, and so the dimension count of every
// ResourceVector. Five are well-known, leaving 27 for instance types and extended resources;
// interning a 33rd name is a ValidationException. A vector is 32 * 8 = 256 bytes, inline.
inline constexpr size_t kMaxResources = 32;

// Pre-registered in every ResourceRegistry with these ids; using them needs no lookup or lock.
inline constexpr ResourceId kCpu = 0;      // "cpu", millicores
inline constexpr ResourceId kMemory = 1;   // "memory", bytes
inline constexpr ResourceId kGpu = 2;      // "nvidia.com/gpu", GPUs
inline constexpr ResourceId kMaxJobs = 3;  // "kube-queue/max-jobs", concurrently admitted jobs
inline constexpr ResourceId kPods = 4;     // "pods", pods
inline constexpr ResourceId kNumWellKnownResources = 5;

// Interns resource names to dense ids 0..size()-1 in registration order. Ids are never reused or
// removed, so an id is valid for the registry's lifetime. Thread-safe: intern() and find() take a
// mutex; name() and scale() of an id already handed out are lock-free, because an entry is
// written once before size_ is published (release) and never changed after.
class ResourceRegistry {
 public:
  ResourceRegistry();
  ResourceRegistry(const ResourceRegistry&) = delete;
  ResourceRegistry& operator=(const ResourceRegistry&) = delete;

  // Returns the id of `name`, registering it if new. Names follow Kubernetes' qualified-name
  // syntax: [prefix/]name, name 1-63 characters of [A-Za-z0-9._-] starting and ending
  // alphanumeric, prefix a DNS subdomain up to 253 characters. Errors: invalid name, or the
  // registry already holds kMaxResources names.
  Result<ResourceId> intern(std::string_view name);
  std::optional<ResourceId> find(std::string_view name) const;

  // `id` must be < size().
  std::string_view name(ResourceId id) const {
    assert(id < size());
    return names_[id];
  }
  // kMilli for cpu, kUnit for everything else.
  QuantityScale scale(ResourceId id) const {
    assert(id < size());
    return id == kCpu ? QuantityScale::kMilli : QuantityScale::kUnit;
  }
  size_t size() const { return size_.load(std::memory_order_acquire); }

 private:
  mutable std::mutex mu_;
  std::map<std::string, ResourceId, std::less<>> ids_;  // guarded by mu_
  std::array<std::string, kMaxResources> names_;        // [0, size_) immutable once published
  std::atomic<size_t> size_{0};
};

// One int64 per resource id, zero by default. A plain value type: copying is a memcpy.
// += and -= saturate at the int64 limits so that "unbounded" quotas never wrap around.
class ResourceVector {
 public:
  static constexpr size_t kCapacity = kMaxResources;

  ResourceVector() = default;

  int64_t get(ResourceId id) const {
    assert(id < kCapacity);
    return v_[id];
  }
  void set(ResourceId id, int64_t value) {
    assert(id < kCapacity);
    v_[id] = value;
  }

  ResourceVector& operator+=(const ResourceVector& other);
  ResourceVector& operator-=(const ResourceVector& other);
  friend ResourceVector operator+(ResourceVector a, const ResourceVector& b) { return a += b; }
  friend ResourceVector operator-(ResourceVector a, const ResourceVector& b) { return a -= b; }
  bool operator==(const ResourceVector& other) const = default;

  // True if every dimension is <= the same dimension of `limit`.
  bool fits_within(const ResourceVector& limit) const;
  bool any_negative() const;
  bool is_zero() const;

  // Nonzero dimensions in name order, values in the resource's unit: "{cpu: 500m, memory:
  // 2147483648, nvidia.com/gpu: 8}"; "{}" when zero.
  std::string to_string(const ResourceRegistry& registry) const;
  // Nonzero dimensions as {name: quantity}, keys in name order. kMilli resources are Kubernetes
  // quantity strings ("500m", "2"); kUnit resources are JSON integers. For a vector without
  // negative entries, from_json(to_json(v)) == v.
  nlohmann::json to_json(const ResourceRegistry& registry) const;
  // Reads {"cpu": "10m", "memory": "2Gi", "nvidia.com/gpu": 8}, interning each name.
  // Errors are ValidationExceptions that start with the field path of the bad entry:
  // `spec.root.max.memory: invalid quantity "5Gb": unknown suffix 'Gb' (...)`.
  static Result<ResourceVector> from_json(const nlohmann::json& obj, ResourceRegistry& registry,
                                          std::string_view field_path);

 private:
  std::array<int64_t, kCapacity> v_{};
};

}  // namespace gf
