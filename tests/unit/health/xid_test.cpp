// The `xid` detector's parser (issue 6, acceptance 11): every line of the Xid corpus parses to the
// right code and PCI address, garbage yields no event and no crash; the fallen-off-the-bus state
// machine, PCI → GPU mapping, the 3-minute de-duplication and the catalogue facts.
#include "health/xid.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "core/random.h"

namespace gf::health {
namespace {

using namespace std::string_view_literals;

struct CorpusCase {
  int line_no = 0;
  std::string expected;  // "Xid 79 0000:b3:00.0", "SXid 24007 …" or "none"
  std::string raw;
};

std::vector<CorpusCase> read_corpus() {
  const std::string path = std::string(GPUFLEET_SOURCE_DIR) + "/tests/unit/health/xid_corpus.txt";
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << "cannot open " << path;
  std::vector<CorpusCase> cases;
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (line.empty() || line[0] == '#') continue;
    const size_t tab = line.find('\t');
    EXPECT_NE(tab, std::string::npos) << "corpus line " << n << " has no tab";
    if (tab == std::string::npos) continue;
    cases.push_back({n, line.substr(0, tab), line.substr(tab + 1)});
  }
  return cases;
}

std::string describe(const std::optional<XidEvent>& e) {
  if (!e) return "none";
  return std::string(to_string(e->source)) + " " + std::to_string(e->code) + " " + e->pci;
}

XidEvent must_parse(std::string_view line) {
  std::optional<XidEvent> e = parse_xid_line(line);
  EXPECT_TRUE(e.has_value()) << line;
  return e.value_or(XidEvent{});
}

// Any event the parser returns: code in its range, address already normalised, raw line kept.
void expect_well_formed(const std::optional<XidEvent>& e, std::string_view input) {
  if (!e) return;
  const int32_t max = e->source == XidSource::kGpu ? kMaxXidCode : kMaxSXidCode;
  EXPECT_GE(e->code, 1);
  EXPECT_LE(e->code, max);
  EXPECT_EQ(normalize_pci(e->pci), e->pci);
  EXPECT_EQ(e->line, input);
}

// ---- corpus -----------------------------------------------------------------------------------

TEST(XidCorpus, EveryLineParsesToItsCodeAndPciOrToNothing) {
  const std::vector<CorpusCase> cases = read_corpus();
  for (const CorpusCase& c : cases) {
    const std::optional<XidEvent> e = parse_xid_line(c.raw);
    EXPECT_EQ(describe(e), c.expected) << "corpus line " << c.line_no << ": " << c.raw;
    expect_well_formed(e, c.raw);
  }
}

TEST(XidCorpus, HoldsTheRealSamplesAndAtLeast25GarbageLines) {
  size_t none = 0, xid = 0, sxid = 0;
  for (const CorpusCase& c : read_corpus()) {
    none += c.expected == "none";
    xid += c.expected.starts_with("Xid ");
    sxid += c.expected.starts_with("SXid ");
  }
  EXPECT_GE(none, 25u);
  EXPECT_GE(xid, 14u);  // the 12 of docs/health.md, the HyperPod 71, the documented scenario line
  EXPECT_GE(sxid, 3u);
}

// ---- fields -----------------------------------------------------------------------------------

TEST(XidParse, PidAndNameArePidAndProcess) {
  const XidEvent e = must_parse(
      "NVRM: Xid (PCI:0000:b3:00.0): 79, pid=1234, name=python, GPU has fallen off the bus.");
  EXPECT_EQ(e.source, XidSource::kGpu);
  EXPECT_EQ(e.code, 79);
  EXPECT_EQ(e.pci, "0000:b3:00.0");
  EXPECT_EQ(e.pid, 1234);
  EXPECT_EQ(e.process, "python");
  EXPECT_EQ(e.message, "GPU has fallen off the bus.");
  EXPECT_EQ(e.severity, "");
  EXPECT_EQ(e.device, "");
}

TEST(XidParse, UnknownPidAndNameQuotedOrNotAreAbsent) {
  for (const char* line :
       {"NVRM: Xid (PCI:0000:b5:00): 13, pid='<unknown>', name=<unknown>, Graphics Exception",
        "NVRM: Xid (PCI:0000:b5:00): 13, pid=<unknown>, name=<unknown>, Graphics Exception"}) {
    const XidEvent e = must_parse(line);
    EXPECT_FALSE(e.pid.has_value()) << line;
    EXPECT_EQ(e.process, "") << line;
    EXPECT_EQ(e.message, "Graphics Exception") << line;
  }
}

TEST(XidParse, PidAloneOrNeitherPidNorNameIsAccepted) {
  const XidEvent pid_only =
      must_parse("NVRM: Xid (PCI:0000:10:1c): 63, pid=1896, Row Remapper: New row");
  EXPECT_EQ(pid_only.pid, 1896);
  EXPECT_EQ(pid_only.process, "");
  EXPECT_EQ(pid_only.message, "Row Remapper: New row");
  const XidEvent neither = must_parse("NVRM: Xid (PCI:0000:17:00): 94, Contained ECC error.");
  EXPECT_FALSE(neither.pid.has_value());
  EXPECT_EQ(neither.message, "Contained ECC error.");
  const XidEvent bad_pid = must_parse("NVRM: Xid (PCI:0000:17:00): 94, pid=12ab, name=x, text");
  EXPECT_FALSE(bad_pid.pid.has_value());  // a pid that is no number is absent, the Xid still counts
  EXPECT_EQ(bad_pid.process, "x");
}

TEST(XidParse, MessageWithCommasIsKeptWhole) {
  const XidEvent e = must_parse(
      "NVRM: Xid (PCI:0000:03:00): 48, pid=91237, name=nv-hostengine, Ch 00000076, errorString "
      "CTX SWITCH TIMEOUT, Info 0x3c046");
  EXPECT_EQ(e.message, "Ch 00000076, errorString CTX SWITCH TIMEOUT, Info 0x3c046");
  const XidEvent spaces = must_parse(
      "NVRM: Xid (PCI:0018:01:00): 149, NETIR_LINK_EVT  Fatal   XC0 i0 Link 09 (0x025525c6)");
  EXPECT_EQ(spaces.message, "NETIR_LINK_EVT  Fatal   XC0 i0 Link 09 (0x025525c6)");
}

TEST(XidParse, RawLineIsKeptByteForByteAsEvidence) {
  const std::string raw =
      "Nov 30 05:00:00 node-1 kernel: NVRM: Xid (PCI:0000:B3:00): 79, pid=1 \r\n";
  const XidEvent e = must_parse(raw);
  EXPECT_EQ(e.line, raw);
  EXPECT_EQ(e.pci, "0000:b3:00.0");
  EXPECT_EQ(e.message, "");
}

TEST(XidParse, SXidCarriesSwitchDeviceAndSeverity) {
  const XidEvent fatal = must_parse(
      "nvidia-nvswitch3: SXid (PCI:0000:c3:00.0): 24007, Fatal, Link 28 sourcetrack timeout error "
      "(First)");
  EXPECT_EQ(fatal.source, XidSource::kNvSwitch);
  EXPECT_EQ(fatal.code, 24007);
  EXPECT_EQ(fatal.device, "nvidia-nvswitch3");
  EXPECT_EQ(fatal.severity, "Fatal");
  EXPECT_EQ(fatal.message, "Link 28 sourcetrack timeout error (First)");
  const XidEvent non_fatal = must_parse("SXid (PCI:0000:06:00.0): 20009, Non-Fatal, Link 04 RX");
  EXPECT_EQ(non_fatal.severity, "Non-fatal");
  EXPECT_EQ(non_fatal.device, "");
  const XidEvent none = must_parse("nvidia-nvswitch0: SXid (PCI:0000:c3:00.0): 26006, SOE HALTED");
  EXPECT_EQ(none.severity, "");
  EXPECT_EQ(none.message, "SOE HALTED");
}

TEST(XidParse, CodesOutsideTheirRangeYieldNothing) {
  EXPECT_TRUE(parse_xid_line("NVRM: Xid (PCI:0000:18:00): 999, x"));
  EXPECT_FALSE(parse_xid_line("NVRM: Xid (PCI:0000:18:00): 1000, x"));
  EXPECT_FALSE(parse_xid_line("NVRM: Xid (PCI:0000:18:00): 0, x"));
  EXPECT_TRUE(parse_xid_line("SXid (PCI:0000:18:00.0): 99999, Fatal, x"));
  EXPECT_FALSE(parse_xid_line("SXid (PCI:0000:18:00.0): 100000, Fatal, x"));
  EXPECT_FALSE(parse_xid_line("NVRM: Xid (PCI:0000:18:00): 99999999999999999999999999, x"));
}

TEST(XidParse, EmptyBlankOverlongAndControlByteLinesYieldNothing) {
  EXPECT_FALSE(parse_xid_line(""));
  EXPECT_FALSE(parse_xid_line("     "));
  EXPECT_FALSE(parse_xid_line("\t\t\r\n"));
  const std::string good = "NVRM: Xid (PCI:0000:18:00): 79, pid=1, name=x, ";
  EXPECT_FALSE(parse_xid_line(good + std::string(10 * 1024, 'a')));  // 10 kB
  EXPECT_FALSE(parse_xid_line(std::string(10 * 1024, 'X') + good));
  EXPECT_FALSE(parse_xid_line("NVRM: Xid (PCI:0000:18:00): 79,\0 pid=1"sv));
  EXPECT_FALSE(parse_xid_line("\0NVRM: Xid (PCI:0000:18:00): 79"sv));
  EXPECT_FALSE(parse_xid_line("NVRM: Xid (PCI:0000:18:00): 79\0"sv));
  EXPECT_FALSE(parse_xid_line(std::string(64, '\0')));
  EXPECT_FALSE(parse_xid_line("NVRM: Xid (PCI:0000:\xff\xfe:00): 79"));
  EXPECT_FALSE(parse_xid_line("\xff\xfe NVRM: Xid (PCI:0000:18:00): 79"));
  EXPECT_FALSE(
      parse_xid_line("NVRM: Xid (PCI:0000:18:00): \xef\xbc\x97\xef\xbc\x99"));  // fullwidth 79
}

TEST(XidParse, NonUtf8BytesInTheFreeTextAreKeptVerbatim) {
  const XidEvent e =
      must_parse("NVRM: Xid (PCI:0000:18:00): 13, pid=1, name=tr\xc3\xa4in, bad \xff\xfe text");
  EXPECT_EQ(e.process, "tr\xc3\xa4in");
  EXPECT_EQ(e.message, "bad \xff\xfe text");
}

// ---- PCI addresses, Xid 154 -------------------------------------------------------------------

TEST(NormalizePci, AddsFunctionAndDomainLowercasesAndRefusesMalformed) {
  // The full grammar is parse_pci_address's (kernel_log_test.cpp).
  EXPECT_EQ(normalize_pci("0000:18:00"), "0000:18:00.0");
  EXPECT_EQ(normalize_pci("0000:B3:00.0"), "0000:b3:00.0");
  EXPECT_EQ(normalize_pci("18:00.0"), "0000:18:00.0");
  EXPECT_EQ(normalize_pci("00000000:18:00.0"), "0000:18:00.0");
  EXPECT_EQ(normalize_pci("0000:1g:00"), std::nullopt);
  EXPECT_EQ(normalize_pci("0000:18:00.8"), std::nullopt);
  EXPECT_EQ(normalize_pci(""), std::nullopt);
}

TEST(Xid154, RecoveryActionNamedInTheMessage) {
  const std::string prefix = "GPU recovery action changed from 0x0 (None) to ";
  EXPECT_EQ(xid154_recovery_action(prefix + "0x0 (None)"), "none");
  EXPECT_EQ(xid154_recovery_action(prefix + "0x1 (GPU Reset Required)"), "reboot");
  EXPECT_EQ(xid154_recovery_action(prefix + "0x2 (Node Reboot Required)"), "reboot");
  EXPECT_EQ(xid154_recovery_action(prefix + "0x3 (Drain P2P)"), "migrate");
  EXPECT_EQ(xid154_recovery_action(prefix + "0x4 (Drain and Reset)"), "migrate");
  EXPECT_EQ(xid154_recovery_action(prefix + "0x9 (Something New)"), std::nullopt);
  EXPECT_EQ(xid154_recovery_action("Contained ECC error."), std::nullopt);
}

// ---- fallen off the bus without an Xid ---------------------------------------------------------

constexpr const char* kLine1 = "[ 1843.308145] NVRM: The NVIDIA GPU 0000:b3:00.0";
constexpr const char* kLine2 =
    "               NVRM: (PCI ID: 10de:26b5) installed in this system has";
constexpr const char* kLine3 =
    "               NVRM: fallen off the bus and is not responding to commands.";

std::vector<std::optional<std::string>> feed_all(FallenOffBusDetector& d,
                                                 const std::vector<std::string>& lines) {
  std::vector<std::optional<std::string>> out;
  for (const std::string& l : lines) out.push_back(d.feed(l));
  return out;
}

TEST(FallenOffBus, ThreeDriverLinesYieldTheAddressOnTheLast) {
  FallenOffBusDetector d;
  const auto out = feed_all(d, {kLine1, kLine2, kLine3});
  EXPECT_EQ(out[0], std::nullopt);
  EXPECT_EQ(out[1], std::nullopt);
  EXPECT_EQ(out[2], "0000:b3:00.0");
  EXPECT_EQ(d.feed(kLine3), std::nullopt);  // the sentence is consumed
}

TEST(FallenOffBus, PciIdOnLineOneAbsentOrWholeSentenceOnOneLine) {
  FallenOffBusDetector d;
  EXPECT_EQ(feed_all(d, {"NVRM: The NVIDIA GPU 0000:B3:00.0 (PCI ID: 10de:26b5)",
                         "NVRM: installed in this system has",
                         "NVRM: fallen off the bus and is not responding to commands."})[2],
            "0000:b3:00.0");
  EXPECT_EQ(feed_all(d, {"kernel: NVRM: The NVIDIA GPU 0000:01:00.0",
                         "NVRM: installed in this system has",
                         "NVRM: fallen off the bus and is not responding to commands."})[2],
            "0000:01:00.0");
  EXPECT_EQ(
      d.feed("Nov 30 05:00:00 h kernel: NVRM: The NVIDIA GPU 0000:5d:00.0 (PCI ID: 10de:2330) "
             "installed in this system has fallen off the bus and is not responding to commands."),
      "0000:5d:00.0");
}

TEST(FallenOffBus, JournalEntryWithEmbeddedNewlines) {
  FallenOffBusDetector d;
  EXPECT_EQ(d.feed(std::string(kLine1) + "\n" + kLine2 + "\n" + kLine3 + "\n"), "0000:b3:00.0");
}

TEST(FallenOffBus, PartialSequencesDoNotTrigger) {
  FallenOffBusDetector d;
  EXPECT_EQ(feed_all(d, {kLine1, kLine2}), (std::vector<std::optional<std::string>>(2)));
  EXPECT_EQ(d.feed("[ 1843.4] NVRM: GPU 0000:b3:00.0: RmInitAdapter failed!"), std::nullopt);
  EXPECT_EQ(d.feed(kLine3), std::nullopt);  // the driver line in between abandoned the sentence
  for (const auto& seq : std::vector<std::vector<std::string>>{
           {kLine2, kLine3},
           {kLine1, kLine3},
           {kLine3},
           {kLine1, kLine1, kLine3},
           {"NVRM: The NVIDIA GPU", kLine2, kLine3},
           {"NVRM: The NVIDIA GPU 0000:zz:00.0", kLine2, kLine3},
           {"NVRM: The NVIDIA GPU 0000:b3:00.0 (PCI ID: 10de:26b5", kLine2, kLine3},
           {kLine1, "NVRM: (PCI ID: 10de:26b5) installed in this system was", kLine3},
           {kLine1, kLine2, "NVRM: fallen off the bus and is responding to commands."},
           {"myapp: The NVIDIA GPU 0000:b3:00.0", kLine2, kLine3},
           {"NVRM: GPU 0000:01:00.0: GPU has fallen off the bus."}}) {
    FallenOffBusDetector fresh;
    for (const std::string& l : seq) EXPECT_EQ(fresh.feed(l), std::nullopt) << l;
  }
}

TEST(FallenOffBus, UpToFourForeignLinesMayInterleaveMoreAbandon) {
  FallenOffBusDetector d;
  const std::string foreign = "[ 1843.31] nvidia: probe of 0000:5d:00.0 failed with error -1";
  EXPECT_EQ(feed_all(d, {kLine1, foreign, kLine2, foreign, foreign, foreign, foreign, kLine3})[7],
            "0000:b3:00.0");
  EXPECT_EQ(feed_all(d, {kLine1, kLine2, foreign, foreign, foreign, foreign, foreign, kLine3})[7],
            std::nullopt);
}

TEST(FallenOffBus, ANewFirstLineRestartsWithTheNewGpu) {
  FallenOffBusDetector d;
  EXPECT_EQ(feed_all(d, {kLine1, "NVRM: The NVIDIA GPU 0000:5d:00.0", kLine2, kLine3})[3],
            "0000:5d:00.0");
}

// ---- PCI → GPU ---------------------------------------------------------------------------------

TEST(PciGpuMap, LearnsTheUuidFromTheDriverLineUnderAnyPrefix) {
  PciGpuMap m;
  EXPECT_TRUE(m.learn("NVRM: GPU at PCI:0000:03:00: GPU-455d8f70-2051-db6c-0430-ffc457bff834"));
  EXPECT_TRUE(
      m.learn("Jan 11 20:24:56 b kernel: [  888.3] NVRM: GPU at PCI:0000:02:00: "
              "GPU-48ef9c66-4339-41dd-0635-3e3803289594"));
  EXPECT_EQ(m.uuid_of("0000:03:00.0"), "GPU-455d8f70-2051-db6c-0430-ffc457bff834");
  EXPECT_EQ(m.uuid_of("0000:03:00"), "GPU-455d8f70-2051-db6c-0430-ffc457bff834");
  EXPECT_EQ(m.uuid_of("0000:02:00.0"), "GPU-48ef9c66-4339-41dd-0635-3e3803289594");
  EXPECT_EQ(m.uuid_of("0000:04:00.0"), "");
  EXPECT_TRUE(m.learn("NVRM: GPU at PCI:0000:03:00: GPU-455d8f70-2051-db6c-0430-ffc457bff834"));
  EXPECT_EQ(m.size(), 2u);  // idempotent
}

TEST(PciGpuMap, OtherLinesLearnNothing) {
  PciGpuMap m;
  for (const char* l :
       {"NVRM: GPU at PCI:0000:17:00.0 has fallen off the bus.",
        "NVRM: GPU at PCI:0000:03:00: GPU-455d8f70",
        "NVRM: GPU at PCI:0000:zz:00: GPU-455d8f70-2051-db6c-0430-ffc457bff834",
        "NVRM: GPU Board Serial Number: 0323618040756",
        "myapp: NVRM: GPU at PCI:0000:03:00: GPU-455d8f70-2051-db6c-0430-ffc457bff834"}) {
    EXPECT_FALSE(m.learn(l)) << l;
  }
  EXPECT_EQ(m.size(), 0u);
}

TEST(PciGpuMap, LearnedIndexIsRankInBusOrderExplicitTableIsAuthoritative) {
  PciGpuMap m;
  m.learn("NVRM: GPU at PCI:0000:b3:00: GPU-00000000-0000-0000-0000-0000000000b3");
  m.learn("NVRM: GPU at PCI:0000:18:00: GPU-00000000-0000-0000-0000-000000000018");
  EXPECT_EQ(m.index_of("0000:18:00.0"), 0);
  EXPECT_EQ(m.index_of("0000:B3:00"), 1);
  EXPECT_EQ(m.index_of("0000:99:00.0"), std::nullopt);
  EXPECT_EQ(m.index_of("garbage"), std::nullopt);
  EXPECT_TRUE(m.set("0000:b3:00.0", 5));
  EXPECT_FALSE(m.set("0000:zz:00.0", 1));
  EXPECT_FALSE(m.set("0000:18:00.0", -1));
  EXPECT_EQ(m.index_of("0000:b3:00.0"), 5);
  EXPECT_EQ(m.index_of("0000:18:00.0"), std::nullopt);  // not in the table
  EXPECT_EQ(m.uuid_of("0000:b3:00.0"), "GPU-00000000-0000-0000-0000-0000000000b3");
  EXPECT_TRUE(m.set("0000:18:00", 2, "GPU-x"));
  EXPECT_EQ(m.index_of("0000:18:00.0"), 2);
  EXPECT_EQ(m.uuid_of("0000:18:00.0"), "GPU-x");
}

// ---- de-duplication ----------------------------------------------------------------------------

XidEvent event(int32_t code, std::string pci, std::string message = "m") {
  XidEvent e;
  e.code = code;
  e.pci = std::move(pci);
  e.message = std::move(message);
  return e;
}

TEST(XidDeduper, RepeatWithin3MinutesIsDroppedAfterIsAccepted) {
  XidDeduper d;
  const XidEvent e = event(79, "0000:18:00.0");
  EXPECT_TRUE(d.accept(e, kSimEpoch));
  EXPECT_FALSE(d.accept(e, kSimEpoch + seconds(5)));
  EXPECT_FALSE(d.accept(e, kSimEpoch + minutes(3) - Duration(1)));
  EXPECT_TRUE(d.accept(e, kSimEpoch + minutes(3)));
  EXPECT_FALSE(d.accept(e, kSimEpoch + minutes(5)));
  EXPECT_FALSE(d.accept(e, kSimEpoch - minutes(1)));  // a clock stepping back stays inside
}

TEST(XidDeduper, WindowRunsFromTheLastAcceptedSoAPersistentFaultRecursOncePerWindow) {
  XidDeduper d;
  const XidEvent e = event(119, "0000:17:00.0");
  int accepted = 0;
  for (Duration t{}; t < minutes(10); t += seconds(5)) accepted += d.accept(e, kSimEpoch + t);
  EXPECT_EQ(accepted, 4);  // at 0, 3, 6 and 9 minutes
}

TEST(XidDeduper, DifferentSourceCodePciOrMessageAreDistinct) {
  XidDeduper d;
  EXPECT_TRUE(d.accept(event(79, "0000:18:00.0"), kSimEpoch));
  EXPECT_TRUE(d.accept(event(48, "0000:18:00.0"), kSimEpoch));
  EXPECT_TRUE(d.accept(event(79, "0000:19:00.0"), kSimEpoch));
  EXPECT_TRUE(d.accept(event(79, "0000:18:00.0", "other text"), kSimEpoch));
  XidEvent sw = event(79, "0000:18:00.0");
  sw.source = XidSource::kNvSwitch;
  EXPECT_TRUE(d.accept(sw, kSimEpoch));
  XidEvent same = event(79, "0000:18:00.0");
  same.pid = 42;  // pid, process and raw line are not part of the identity
  same.line = "[ 1.0] different prefix";
  EXPECT_FALSE(d.accept(same, kSimEpoch + seconds(1)));
}

TEST(XidDeduper, MemoryIsBoundedByWindowAndByMaxEntries) {
  XidDeduper d;
  for (int i = 0; i < 10000; ++i) {
    EXPECT_TRUE(d.accept(event(13, "0000:18:00.0", std::to_string(i)), kSimEpoch + seconds(i)));
  }
  EXPECT_LE(d.size(), 181u);  // what fits in 3 minutes at one per second
  XidDeduper capped(minutes(3), 100);
  for (int i = 0; i < 1000; ++i)
    capped.accept(event(13, "0000:18:00.0", std::to_string(i)), kSimEpoch);
  EXPECT_EQ(capped.size(), 100u);
  EXPECT_TRUE(capped.accept(event(13, "0000:18:00.0", "0"), kSimEpoch));     // oldest forgotten
  EXPECT_FALSE(capped.accept(event(13, "0000:18:00.0", "999"), kSimEpoch));  // newest kept
}

// ---- catalogue ---------------------------------------------------------------------------------

TEST(XidInfo, CatalogueActionAndCriticalEvidence) {
  EXPECT_EQ(xid_info(79).action, "reboot");
  EXPECT_TRUE(xid_info(79).critical);
  EXPECT_EQ(xid_info(79).mnemonic, "GPU has fallen off the bus");
  EXPECT_EQ(xid_info(13).action, "none");
  EXPECT_FALSE(xid_info(13).critical);
  EXPECT_TRUE(xid_info(48).critical);
  EXPECT_EQ(xid_info(48).action, "reboot");
  EXPECT_EQ(xid_info(54).action, "migrate");
  EXPECT_EQ(xid_info(94).action, "reboot-when-idle");
  EXPECT_EQ(xid_info(63).action, "none");
  EXPECT_TRUE(xid_info(63).critical);
  EXPECT_EQ(xid_info(99999).action, "manual");
  EXPECT_FALSE(xid_info(99999).critical);
  EXPECT_EQ(xid_info(99999).mnemonic, "");
  EXPECT_EQ(xid_info(142).action, "manual");  // EKS lists it, the notes do not describe it
  EXPECT_TRUE(xid_info(142).critical);
  EXPECT_EQ(xid_info(-1).action, "manual");
  int critical = 0;
  for (int32_t c = 0; c <= kMaxXidCode; ++c) critical += xid_info(c).critical;
  EXPECT_EQ(critical, 21);
}

// ---- fuzz --------------------------------------------------------------------------------------

std::string random_bytes(Random& rng, size_t max_len) {
  static constexpr std::string_view kAlphabet =
      "NVRM: SXid (PCI:0123456789abcdefABCDEF),.[]<>'=\n\t";
  std::string s(rng.uniform(max_len + 1), '\0');
  const bool structured = rng.uniform(2) == 0;  // half from the grammar's own bytes
  for (char& c : s) {
    c = structured ? kAlphabet[rng.uniform(kAlphabet.size())] : static_cast<char>(rng.uniform(256));
  }
  if (structured && rng.uniform(2) == 0)
    s.insert(0, rng.uniform(2) ? "NVRM: Xid (PCI:" : "SXid (PCI:");
  return s;
}

std::string mutate(Random& rng, std::string s) {
  for (uint64_t n = 1 + rng.uniform(4); n > 0; --n) {
    const size_t at = s.empty() ? 0 : rng.uniform(s.size());
    const uint64_t op = rng.uniform(5);
    const char byte = static_cast<char>(rng.uniform(256));
    if (op == 0 && !s.empty()) s[at] = byte;                   // replace
    if (op == 1) s.erase(at, rng.uniform(8));                  // delete
    if (op == 2) s.insert(at, 1, byte);                        // insert
    if (op == 3) s.resize(at);                                 // truncate
    if (op == 4) s.insert(at, s.substr(at, rng.uniform(16)));  // repeat a piece
  }
  return s;
}

void check_all(std::string_view input, FallenOffBusDetector& bus, PciGpuMap& map) {
  expect_well_formed(parse_xid_line(input), input);
  const std::optional<std::string> pci = bus.feed(input);
  if (pci) {
    EXPECT_EQ(normalize_pci(*pci), *pci);
  }
  map.learn(input);
}

TEST(XidFuzz, RandomBytesNeverCrashAndAnyEventIsWellFormed) {
  Random rng(20260101);
  FallenOffBusDetector bus;
  PciGpuMap map;
  for (int i = 0; i < 20000; ++i) {
    check_all(random_bytes(rng, i % 100 == 0 ? 6000 : 200), bus, map);
  }
}

TEST(XidFuzz, MutatedCorpusLinesNeverCrashAndAnyEventIsWellFormed) {
  Random rng(7);
  const std::vector<CorpusCase> cases = read_corpus();
  ASSERT_FALSE(cases.empty());
  std::vector<std::string> seeds = {kLine1, kLine2, kLine3};
  for (const CorpusCase& c : cases) seeds.push_back(c.raw);
  FallenOffBusDetector bus;
  PciGpuMap map;
  size_t events = 0;
  for (int i = 0; i < 20000; ++i) {
    const std::string line = mutate(rng, seeds[rng.uniform(seeds.size())]);
    events += parse_xid_line(line).has_value();
    check_all(line, bus, map);
  }
  EXPECT_GT(events, 1000u);  // the mutations reach the parser's depths, not only its first check
}

}  // namespace
}  // namespace gf::health
