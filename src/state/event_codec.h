// The one codec of journal events (docs/architecture.md "Typed events"). Each event type is a
// struct with its wire name (kType) and a field list:
//
//   struct NodeRunning {
//     static constexpr std::string_view kType = "node.running";
//     std::string cluster, instance_id;
//     static constexpr auto fields() {
//       return std::tuple{field("Name", &NodeRunning::cluster),
//                         field("InstanceId", &NodeRunning::instance_id)};
//     }
//   };
//
// to_json writes every field and the version ("v"); decode reads them back and refuses a missing
// or mistyped field, naming the event type and the field — a malformed event is an error, never a
// default. A type may add `Status check() const` for a rule across fields (decode runs it).
// A std::optional member is the only field that may be absent (or null). A payload with
// no "v" was written before versions and is version 1; a version newer than this release is
// refused, so an old follower never misreads a new journal.
#pragma once

#include <fmt/format.h>

#include <concepts>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <vector>

#include "core/json.h"
#include "core/result.h"
#include "core/time.h"
#include "state/events.h"

namespace gf::event_codec {

// The version this release writes; it reads every version up to it. A type whose payload has
// changed since declares its own `static constexpr int kVersion` (job.submitted: 2).
inline constexpr int kVersion = 1;

template <typename T>
constexpr int version_of() {
  if constexpr (requires { T::kVersion; }) {
    return T::kVersion;
  } else {
    return kVersion;
  }
}

template <typename T, typename M>
struct Field {
  const char* key;
  M T::*member;
};

template <typename T, typename M>
constexpr Field<T, M> field(const char* key, M T::*member) {
  return {key, member};
}

// Thrown by a value codec for a value of the right JSON type that still does not parse (an
// unknown status name); decode turns it into a Status naming the field.
struct Malformed : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A record type with its own canonical codec (Job, GroupSpec, JobWait, …).
template <typename M>
concept JsonRecord = requires(const M& m, const Json& j) {
  { m.to_json() } -> std::convertible_to<Json>;
  { M::from_json(j) } -> std::same_as<Result<M>>;
};

// A nested object described by its own field list (no kType, no version).
template <typename M>
concept FieldRecord = requires {
  M::fields();
};

namespace detail {
template <typename T>
Json encode_fields(const T& e);
template <typename T>
std::string decode_fields(const Json& p, T& e);  // "" or what is wrong
}  // namespace detail

// How one member type is written and read. Specialize for enums (see EnumCodec) and for records
// whose codec has other names.
template <typename M>
struct Codec {
  static Json put(const M& v) {
    if constexpr (JsonRecord<M>) {
      return v.to_json();
    } else if constexpr (FieldRecord<M>) {
      return detail::encode_fields(v);
    } else {
      return Json(v);
    }
  }
  static void take(const Json& j, M& out) {
    if constexpr (JsonRecord<M>) {
      Result<M> r = M::from_json(j);
      if (!r.ok()) throw Malformed(r.status().message());
      out = std::move(*r);
    } else if constexpr (FieldRecord<M>) {
      if (!j.is_object()) throw Malformed(fmt::format("expected an object, got {}", j.type_name()));
      if (std::string error = detail::decode_fields(j, out); !error.empty()) throw Malformed(error);
    } else if constexpr (std::is_same_v<M, bool>) {
      if (!j.is_boolean())
        throw Malformed(fmt::format("expected a boolean, got {}", j.type_name()));
      out = j.get<bool>();
    } else if constexpr (std::is_integral_v<M>) {
      if (!j.is_number_integer())
        throw Malformed(fmt::format("expected an integer, got {}", j.type_name()));
      out = j.get<M>();
    } else {
      j.get_to(out);
    }
  }
};

template <>
struct Codec<Json> {
  static Json put(const Json& v) { return v; }
  static void take(const Json& j, Json& out) { out = j; }
};

// Times and durations travel as integer microseconds.
template <>
struct Codec<Time> {
  static Json put(const Time& v) { return to_micros(v); }
  static void take(const Json& j, Time& out) {
    int64_t us = 0;
    Codec<int64_t>::take(j, us);
    out = from_micros(us);
  }
};
template <>
struct Codec<Duration> {
  static Json put(const Duration& v) { return v.count(); }
  static void take(const Json& j, Duration& out) {
    int64_t us = 0;
    Codec<int64_t>::take(j, us);
    out = Duration(us);
  }
};

template <typename M>
struct Codec<std::vector<M>> {
  static Json put(const std::vector<M>& v) {
    Json a = Json::array();
    for (const M& m : v) a.push_back(Codec<M>::put(m));
    return a;
  }
  static void take(const Json& j, std::vector<M>& out) {
    if (!j.is_array()) throw Malformed(fmt::format("expected an array, got {}", j.type_name()));
    out.clear();
    out.reserve(j.size());
    for (const Json& e : j) Codec<M>::take(e, out.emplace_back());
  }
};

// An enum written by its wire name: `Parse` returns std::optional<E> for a name.
template <typename E, auto Name, auto Parse>
struct EnumCodec {
  static Json put(const E& v) { return std::string(Name(v)); }
  static void take(const Json& j, E& out) {
    if (!j.is_string()) throw Malformed(fmt::format("expected a string, got {}", j.type_name()));
    const std::string s = j.get<std::string>();
    const std::optional<E> e = Parse(s);
    if (!e) throw Malformed(fmt::format("unknown value \"{}\"", s));
    out = *e;
  }
};

namespace detail {

template <typename M>
struct IsOptional : std::false_type {};
template <typename M>
struct IsOptional<std::optional<M>> : std::true_type {};

template <typename T, typename M>
void put_field(Json& j, const T& e, const Field<T, M>& f) {
  const M& v = e.*f.member;
  if constexpr (IsOptional<M>::value) {
    if (v) j[f.key] = Codec<typename M::value_type>::put(*v);
  } else {
    j[f.key] = Codec<M>::put(v);
  }
}

// Reads one field; false with `error` set when it is missing or malformed.
template <typename T, typename M>
bool take_field(const Json& p, T& e, const Field<T, M>& f, std::string& error) {
  const auto it = p.find(f.key);
  try {
    if constexpr (IsOptional<M>::value) {
      if (it == p.end() || it->is_null()) {
        (e.*f.member).reset();
        return true;
      }
      Codec<typename M::value_type>::take(*it, (e.*f.member).emplace());
    } else {
      if (it == p.end()) {
        error = fmt::format("missing field {}", f.key);
        return false;
      }
      Codec<M>::take(*it, e.*f.member);
    }
    return true;
  } catch (const std::exception& ex) {
    error = fmt::format("field {}: {}", f.key, ex.what());
    return false;
  }
}

template <typename T>
Json encode_fields(const T& e) {
  Json j = Json::object();
  std::apply([&](const auto&... f) { (put_field(j, e, f), ...); }, T::fields());
  return j;
}

template <typename T>
std::string decode_fields(const Json& p, T& e) {
  std::string error;
  std::apply([&](const auto&... f) { (take_field(p, e, f, error) && ...); }, T::fields());
  return error;
}

}  // namespace detail

// The payload's version, or an error when it is not one this release reads (1 to `newest`).
Status check_version(std::string_view type, const Json& payload, int newest = kVersion);

template <typename T>
Json to_json(const T& e) {
  Json j = detail::encode_fields(e);
  j["v"] = version_of<T>();
  return j;
}

template <typename T>
Result<T> decode(const Json& payload) {
  if (!payload.is_object())
    return internal_error(fmt::format("{}: payload is not an object", T::kType));
  GF_RETURN_IF_ERROR(check_version(T::kType, payload, version_of<T>()));
  T e;
  if (std::string error = detail::decode_fields(payload, e); !error.empty())
    return internal_error(fmt::format("{}: {}", T::kType, error));
  if constexpr (requires { e.check(); }) {
    if (Status st = e.check(); !st.ok()) return st.with_prefix(T::kType);
  }
  return e;
}

template <typename T>
Event to_event(const T& e, std::string idempotency_key = "") {
  return Event{std::string(T::kType), to_json(e), std::move(idempotency_key)};
}

}  // namespace gf::event_codec
