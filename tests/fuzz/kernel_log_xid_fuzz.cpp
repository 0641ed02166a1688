// Kernel-log text as the node agent reads it (health/kernel_log.h, xid.h, node_signals.h): every
// line goes through the transport-prefix stripper, the Xid/SXid parser, the fallen-off-the-bus
// detector, the PCI → GPU map and the node-problem-detector patterns; the whole input is also
// read as /proc/mounts and as the two InfiniBand sysfs files (split at the first NUL). These
// parsers promise to take any byte string, never throw and never read past the view; ASan
// checks the last, the invariants below the rest.
//
// Invariants checked:
//  - kernel_message answers a sub-view of the line, never longer than kMaxLineBytes;
//  - an Xid event keeps the raw line verbatim, its code is in range for its source, its PCI
//    address is normalised (normalize_pci of it is itself) and it reports the same event when
//    the line comes with a dmesg stamp in front;
//  - normalize_pci and parse_pci_address agree and are idempotent;
//  - the fallen-off-the-bus detector answers normalised addresses;
//  - the de-duplicator accepts an event the first time, not again within its window, and again
//    after it;
//  - a kernel pattern names one of the known detectors and a non-empty reason;
//  - every read-only mount is one the mount parser should report (not read-only by nature).
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_support.h"
#include "health/kernel_log.h"
#include "health/node_signals.h"
#include "health/xid.h"

namespace gf::health {
namespace {

bool inside(std::string_view part, std::string_view whole) {
  return part.empty() ||
         (part.data() >= whole.data() && part.data() + part.size() <= whole.data() + whole.size());
}

void check_pci(std::string_view text) {
  const std::optional<std::string> norm = normalize_pci(text);
  const std::optional<PciAddress> addr = parse_pci_address(text);
  FUZZ_CHECK(norm.has_value() == addr.has_value(), std::string(text));
  if (!norm) return;
  FUZZ_CHECK(*norm == addr->to_string(), *norm + " vs " + addr->to_string());
  FUZZ_CHECK(normalize_pci(*norm) == norm, *norm);
}

void check_xid(std::string_view line, const XidEvent& e) {
  FUZZ_CHECK(e.line == line, e.line);
  const int32_t max = e.source == XidSource::kGpu ? kMaxXidCode : kMaxSXidCode;
  FUZZ_CHECK(e.code >= 1 && e.code <= max, std::to_string(e.code));
  FUZZ_CHECK(normalize_pci(e.pci) == e.pci, e.pci);
  FUZZ_CHECK(!e.pid || *e.pid >= 0, std::to_string(*e.pid));
  const XidInfo info = xid_info(e.code);
  FUZZ_CHECK(!info.action.empty(), std::to_string(e.code));
  if (e.source == XidSource::kGpu && e.code == 154) (void)xid154_recovery_action(e.message);
  // The same line behind a dmesg stamp is the same event (evidence aside).
  if (line.size() + 16 <= kMaxLineBytes && !line.starts_with('[') && !line.starts_with('<')) {
    const std::string stamped = "[  123.456789] " + std::string(line);
    std::optional<XidEvent> again = parse_xid_line(stamped);
    if (again) {
      again->line = e.line;
      FUZZ_CHECK(*again == e, stamped);
    }
  }
}

}  // namespace
}  // namespace gf::health

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gf::health;  // NOLINT(google-build-using-namespace): one file, one namespace
  if (size > gf::fuzz::kMaxInputBytes) return -1;
  const std::string_view text = gf::fuzz::as_text(data, size);

  FallenOffBusDetector fob;
  PciGpuMap gpus;
  XidDeduper dedup;
  gf::Time now = gf::kSimEpoch;
  for (std::string_view rest = text; !rest.empty();) {
    auto [line, tail] = gf::fuzz::split_once(rest, "\n");
    rest = tail;
    now += gf::seconds(1);

    if (std::optional<std::string_view> msg = kernel_message(line)) {
      FUZZ_CHECK(inside(*msg, line), std::string(line));
      FUZZ_CHECK(line.size() <= kMaxLineBytes, std::to_string(line.size()));
    }
    if (std::optional<XidEvent> e = parse_xid_line(line)) {
      check_xid(line, *e);
      // A repeat within the window is one event; once the window has passed it counts again.
      XidDeduper fresh;
      FUZZ_CHECK(fresh.accept(*e, now), e->line);
      FUZZ_CHECK(!fresh.accept(*e, now + gf::seconds(1)), e->line);
      FUZZ_CHECK(fresh.accept(*e, now + gf::minutes(3) + gf::seconds(2)), e->line);
      (void)dedup.accept(*e, now);
      FUZZ_CHECK(dedup.size() <= XidDeduper::kDefaultMaxEntries, std::to_string(dedup.size()));
      (void)gpus.index_of(e->pci);
      (void)gpus.uuid_of(e->pci);
    }
    if (std::optional<std::string> pci = fob.feed(line)) {
      FUZZ_CHECK(normalize_pci(*pci) == *pci, *pci);
    }
    if (gpus.learn(line)) FUZZ_CHECK(gpus.size() > 0, std::string(line));
    if (std::optional<KernelPattern> k = match_kernel_pattern(line)) {
      FUZZ_CHECK(k->detector == kDetectorXfsHang || k->detector == kDetectorKernelDeadlock ||
                     k->detector == kDetectorReadonlyFs,
                 std::string(k->detector));
      FUZZ_CHECK(!k->reason.empty(), k->message);
      FUZZ_CHECK(!k->pid || *k->pid >= 0, k->message);
    }
    // Each whitespace-separated word may be a PCI address.
    for (std::string_view words = line; !words.empty();) {
      auto [word, more] = gf::fuzz::split_once(words, " ");
      check_pci(word);
      words = more;
    }
  }

  for (const ReadOnlyMount& m : readonly_mounts(text)) {
    FUZZ_CHECK(!readonly_by_nature(m.fstype), m.fstype);
    FUZZ_CHECK(!m.options.empty(), m.mount_point);
  }
  auto [state_file, phys_file] = gf::fuzz::split_once(text, std::string_view("\0", 1));
  const IbPortReading port = parse_ib_port(state_file, phys_file);
  const IbLinkVerdict verdict = ib_link_verdict(port, std::nullopt);
  FUZZ_CHECK((verdict == IbLinkVerdict::kPortDown) == !port.up(), std::string(to_string(verdict)));
  return 0;
}
