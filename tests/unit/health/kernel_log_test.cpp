// Kernel-log lines as the node agent receives them: the transport prefixes kernel_message strips,
// the ones it refuses (a user-space program's syslog line), and the PCI address grammar.
#include "health/kernel_log.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace gf::health {
namespace {

using namespace std::string_view_literals;

TEST(KernelMessage, EveryKnownTransportPrefixIsStripped) {
  const std::string msg = "NVRM: Xid (PCI:0000:18:00): 79, pid=1";
  for (const std::string prefix :
       {"", "   ", "[  123.456789] ", "[Fri Aug 30 11:43:09 2024] ",
        "Nov 30 05:00:00 gpu-7 kernel: ", "Nov  3 05:00:00 kernel: ",
        "Jan 11 20:24:56 b kernel: [  888.328156] ",
        "kernel: ", "2025-11-30T05:00:00.123456+00:00 gpu-7 kernel: ",
        "2025-11-30T05:00:00+0000 gpu-7 kernel: ", "2025-11-30T05:00:00,123456+00:00 ",
        "2025-11-30T05:00:00Z ", "<4>", "<4>[  123.456789] ", "4,1234,5678901,-;", "6,99,1,c;"}) {
    EXPECT_EQ(kernel_message(prefix + msg + " \r\n"), msg) << '"' << prefix << '"';
  }
}

TEST(KernelMessage, UnknownPrefixesAreLeftInPlace) {
  // Left in place, so a parser looking for its marker at the start finds none.
  EXPECT_EQ(kernel_message("sshd[1]: NVRM: Xid"), "sshd[1]: NVRM: Xid");
  EXPECT_EQ(kernel_message("[hello] NVRM: Xid"), "[hello] NVRM: Xid");
  EXPECT_EQ(kernel_message("[ 12.5 NVRM: Xid"), "[ 12.5 NVRM: Xid");
  EXPECT_EQ(kernel_message("Nov 30 NVRM: Xid"), "Nov 30 NVRM: Xid");
  EXPECT_EQ(kernel_message(""), "");
}

TEST(KernelMessage, SyslogLineOfAnotherProgramControlBytesAndOverlongLinesAreRefused) {
  EXPECT_EQ(kernel_message("Nov 30 05:00:00 gpu-7 logger: NVRM: Xid (PCI:0000:18:00): 79"),
            std::nullopt);
  EXPECT_EQ(kernel_message("Nov 30 05:00:00 gpu-7 kernel-x: NVRM: Xid"), std::nullopt);
  EXPECT_EQ(kernel_message("NVRM: Xid\0 (PCI:0000:18:00): 79"sv), std::nullopt);
  EXPECT_EQ(kernel_message("NVRM: \x1b[31mXid"), std::nullopt);
  EXPECT_EQ(kernel_message("NVRM: a\nb"), std::nullopt);  // only a trailing newline is allowed
  EXPECT_EQ(kernel_message(std::string(kMaxLineBytes, 'a')), std::string(kMaxLineBytes, 'a'));
  EXPECT_EQ(kernel_message(std::string(kMaxLineBytes + 1, 'a')), std::nullopt);
  EXPECT_EQ(kernel_message("\xff\xfe text"), "\xff\xfe text");  // non-UTF-8 is not refused here
}

TEST(PciAddress, GrammarAndCanonicalForm) {
  // clang-format off
  const std::vector<std::pair<std::string, std::optional<std::string>>> table = {
      {"0000:18:00", "0000:18:00.0"},   {"0000:18:00.0", "0000:18:00.0"},
      {"0000:B3:00.0", "0000:b3:00.0"}, {"0000:b3:1F.7", "0000:b3:1f.7"},
      {"18:00.0", "0000:18:00.0"},      {"18:00", "0000:18:00.0"},
      {"0001:ab:cd", "0001:ab:cd.0"},   {"00000000:18:00.0", "0000:18:00.0"},
      {"0:18:00", "0000:18:00.0"},      {"10000:01:00.0", "10000:01:00.0"},
      {"", std::nullopt},               {"0000", std::nullopt},
      {"0000:18", std::nullopt},        {"0000:1g:00", std::nullopt},
      {"0000:018:00", std::nullopt},    {"0000:18:0", std::nullopt},
      {"0000:18:00.8", std::nullopt},   {"0000:18:00.", std::nullopt},
      {"0000:18:00.00", std::nullopt},  {"0000:18:00:00.0", std::nullopt},
      {" 0000:18:00", std::nullopt},    {"0000:18:00 ", std::nullopt},
      {"-000:18:00", std::nullopt},     {"000000000:18:00.0", std::nullopt},
  };
  // clang-format on
  for (const auto& [in, want] : table) {
    const std::optional<PciAddress> a = parse_pci_address(in);
    EXPECT_EQ(a ? std::optional(a->to_string()) : std::nullopt, want) << '"' << in << '"';
  }
}

TEST(PciAddress, OrdersAsThePciBus) {
  EXPECT_LT(*parse_pci_address("0000:18:00.0"), *parse_pci_address("0000:b3:00.0"));
  EXPECT_LT(*parse_pci_address("0000:b3:00.0"), *parse_pci_address("0001:01:00.0"));
  EXPECT_LT(*parse_pci_address("2000:00:00.0"), *parse_pci_address("10000:00:00.0"));
  EXPECT_EQ(*parse_pci_address("0000:18:00"), *parse_pci_address("18:00.0"));
}

}  // namespace
}  // namespace gf::health
