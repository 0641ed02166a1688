// Job traces (sim/trace.h, docs/scenarios.md "Traces"): `simulate --trace FILE` and a scenario's
// `traces:` read CSV files a user brings. The input is a whole file's text, read as ITP, as
// Alibaba openb, and with the format told by the header.
//
// Invariants checked:
//  - no crash, no exception; a refusal is a well-formed error naming the file;
//  - every job read has a DNS-1123 name of at most 63 characters, a positive run time, pods >= 1,
//    GPUs >= 0, and jobs come in submission order;
//  - the manifest a job becomes parses back as a PyTorchJob body (an object with kind and spec).
#include <string>

#include "fuzz_support.h"
#include "sim/trace.h"

namespace {

void check(std::string_view text, std::optional<gf::TraceFormat> format) {
  gf::TraceSpec spec;
  spec.file = "fuzz.csv";
  spec.format = format;
  const auto jobs = gf::parse_trace(text, spec, 0, 7, "fuzz.csv");
  if (!jobs.ok()) {
    FUZZ_CHECK_ERROR(jobs.status());
    FUZZ_CHECK(jobs.status().message().starts_with("fuzz.csv"), jobs.status().message());
    return;
  }
  gf::Duration last{0};
  for (const gf::TraceJob& j : *jobs) {
    FUZZ_CHECK(!j.name.empty() && j.name.size() <= 63, j.name);
    for (char c : j.name) {
      FUZZ_CHECK((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-', j.name);
    }
    FUZZ_CHECK(j.run > gf::Duration(0), j.name);
    FUZZ_CHECK(j.pods >= 1 && j.gpus >= 0, j.name);
    FUZZ_CHECK(j.at >= last, j.name);
    last = j.at;
    const gf::Json m = gf::trace_job_manifest(j, spec);
    FUZZ_CHECK(m.is_object() && m.contains("kind") && m.contains("spec"), m.dump());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > gf::fuzz::kMaxInputBytes) return -1;
  const std::string_view text = gf::fuzz::as_text(data, size);
  check(text, std::nullopt);
  check(text, gf::TraceFormat::kItp);
  check(text, gf::TraceFormat::kAlibaba);
  return 0;
}
