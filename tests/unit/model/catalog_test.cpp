#include "model/catalog.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <tuple>

#include "support/temp_dir.h"

namespace gf {
namespace {

Json entry(std::string name, Json price = "1.5") {
  return Json{{"InstanceType", std::move(name)},
              {"Gpus", 0},
              {"GpuModel", ""},
              {"VCpus", 4},
              {"MemoryGiB", 16},
              {"NetworkGbps", 10},
              {"PricePerHour", std::move(price)}};
}

std::string error_of(const Json& catalog) {
  Result<Catalog> c = Catalog::from_json(catalog);
  EXPECT_FALSE(c.ok());
  return c.status().message();
}

TEST(Catalog, BuiltinContainsEverySpecType) {
  const Catalog& c = Catalog::builtin();
  for (const char* name : {"ml.m5.xlarge", "ml.c5.xlarge", "ml.g5.xlarge", "ml.g5.12xlarge",
                           "ml.g5.48xlarge", "ml.p4d.24xlarge", "ml.p4de.24xlarge",
                           "ml.p5.48xlarge", "ml.p5e.48xlarge", "ml.trn1.32xlarge"}) {
    const InstanceTypeInfo* info = c.find(name);
    ASSERT_NE(info, nullptr) << name;
    EXPECT_EQ(info->name, name);
    EXPECT_GT(info->price_micros_per_hour, 0) << name;
  }
}

TEST(Catalog, BuiltinP5HasEightH100s) {
  const InstanceTypeInfo* p5 = Catalog::builtin().find("ml.p5.48xlarge");
  ASSERT_NE(p5, nullptr);
  EXPECT_EQ(p5->gpus, 8);
  EXPECT_EQ(p5->gpu_model, "H100");
  EXPECT_EQ(p5->vcpus, 192);
  EXPECT_EQ(p5->memory_mib, int64_t{2048} * 1024);
  EXPECT_EQ(p5->network_gbps, 3200);
  EXPECT_EQ(p5->price_micros_per_hour, 98'320'000);
  const InstanceTypeInfo* m5 = Catalog::builtin().find("ml.m5.xlarge");
  ASSERT_NE(m5, nullptr);
  EXPECT_EQ(m5->gpus, 0);
  EXPECT_EQ(m5->gpu_model, "");
}

TEST(Catalog, BuiltinIsTheEmbeddedDataFile) {
  Result<Catalog> file =
      Catalog::load_file(std::string(GPUFLEET_SOURCE_DIR) + "/data/catalog.json");
  ASSERT_TRUE(file.ok()) << file.status().to_string();
  ASSERT_EQ(file->names(), Catalog::builtin().names());
  for (const std::string& name : file->names()) {
    const InstanceTypeInfo& a = *file->find(name);
    const InstanceTypeInfo& b = *Catalog::builtin().find(name);
    EXPECT_EQ(std::tie(a.gpus, a.gpu_model, a.vcpus, a.memory_mib, a.network_gbps,
                       a.price_micros_per_hour),
              std::tie(b.gpus, b.gpu_model, b.vcpus, b.memory_mib, b.network_gbps,
                       b.price_micros_per_hour))
        << name;
  }
}

TEST(Catalog, NamesAreSorted) {
  const std::vector<std::string> names = Catalog::builtin().names();
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  EXPECT_EQ(names.size(), Catalog::builtin().size());
}

TEST(Catalog, UnknownTypeLookupReturnsNull) {
  EXPECT_EQ(Catalog::builtin().find("ml.nope.xlarge"), nullptr);
  EXPECT_EQ(Catalog::builtin().find(""), nullptr);
  EXPECT_EQ(Catalog().find("ml.m5.xlarge"), nullptr);
}

TEST(Catalog, PriceParsingIsExact) {
  EXPECT_EQ(*parse_price_micros("98.32"), 98'320'000);
  EXPECT_EQ(*parse_price_micros("0.5"), 500'000);
  EXPECT_EQ(*parse_price_micros("12"), 12'000'000);
  EXPECT_EQ(*parse_price_micros("0"), 0);
  EXPECT_EQ(*parse_price_micros("37.688"), 37'688'000);
  EXPECT_EQ(*parse_price_micros("0.000001"), 1);
  EXPECT_EQ(*parse_price_micros("1.123456"), 1'123'456);
  // 0.1 + 0.2 style binary rounding cannot creep in: every digit is taken as written.
  EXPECT_EQ(*parse_price_micros("113.070001"), 113'070'001);
}

TEST(Catalog, PriceParsingRejectsGarbage) {
  for (const char* bad : {"1.1234567", "-1", "abc", "", "1.", ".5", "+1", "1e3", " 1", "1 ", "1,5",
                          "9.x", "1.2.3", "99999999999999999999"}) {
    Result<int64_t> r = parse_price_micros(bad);
    EXPECT_FALSE(r.ok()) << "\"" << bad << "\"";
    if (!r.ok()) {
      EXPECT_EQ(r.status().code(), ErrorCode::kValidation);
      EXPECT_NE(r.status().message().find("invalid price \"" + std::string(bad) + "\""),
                std::string::npos)
          << r.status().message();
    }
  }
}

TEST(Catalog, PriceFormattingRoundTrips) {
  EXPECT_EQ(format_price_micros(98'320'000), "98.32");
  EXPECT_EQ(format_price_micros(500'000), "0.5");
  EXPECT_EQ(format_price_micros(12'000'000), "12");
  EXPECT_EQ(format_price_micros(1), "0.000001");
  EXPECT_EQ(format_price_micros(-1'500'000), "-1.5");
  for (const char* text : {"98.32", "0.5", "24.725", "0.000001"}) {
    EXPECT_EQ(format_price_micros(*parse_price_micros(text)), text);
  }
}

TEST(Catalog, InvalidPriceErrorNamesThePath) {
  Json c = Json::array({entry("a"), entry("b"), entry("c"), entry("d", "9.x")});
  EXPECT_EQ(error_of(c).rfind("catalog[3].PricePerHour: invalid price \"9.x\"", 0), 0u)
      << error_of(c);
}

TEST(Catalog, NumericPriceIsAWrongFieldTypeError) {
  // A JSON number would go through a double; the file must spell prices as decimal strings.
  Json c = Json::array({entry("a", 98.32)});
  EXPECT_EQ(error_of(c).rfind("catalog[0].PricePerHour: expected string", 0), 0u) << error_of(c);
}

TEST(Catalog, WrongFieldTypeErrorNamesThePath) {
  Json c = Json::array({entry("a"), entry("b")});
  c[1]["Gpus"] = "eight";
  EXPECT_EQ(error_of(c), "catalog[1].Gpus: expected integer, got \"eight\"");
  c[1]["Gpus"] = 0;
  c[1]["InstanceType"] = 7;
  EXPECT_EQ(error_of(c), "catalog[1].InstanceType: expected string, got 7");
}

TEST(Catalog, MissingAndOutOfRangeFieldsAreErrors) {
  Json c = Json::array({entry("a")});
  c[0].erase("VCpus");
  EXPECT_EQ(error_of(c), "catalog[0].VCpus: is required");
  c[0]["VCpus"] = 0;
  EXPECT_NE(error_of(c).find("catalog[0].VCpus: must be between 1"), std::string::npos);
  c[0]["VCpus"] = 4;
  c[0]["Gpus"] = 8;
  EXPECT_EQ(error_of(c), "catalog[0].GpuModel: is required when Gpus > 0");
  c[0]["Gpus"] = -1;
  EXPECT_NE(error_of(c).find("catalog[0].Gpus: must be between 0"), std::string::npos);
}

TEST(Catalog, DuplicateTypeIsAnError) {
  Json c = Json::array({entry("ml.x"), entry("ml.y"), entry("ml.x")});
  EXPECT_EQ(error_of(c), "catalog[2].InstanceType: duplicate instance type \"ml.x\"");
}

TEST(Catalog, TopLevelMustBeAList) {
  EXPECT_EQ(error_of(Json::object()).rfind("catalog: expected an array", 0), 0u);
  EXPECT_EQ(error_of(Json::array({1})), "catalog[0]: expected object, got 1");
}

TEST(Catalog, FromJsonConvertsUnits) {
  Json c = Json::array({entry("ml.x", "2.25")});
  c[0]["Gpus"] = 4;
  c[0]["GpuModel"] = "A10G";
  c[0]["MemoryGiB"] = 192;
  Result<Catalog> cat = Catalog::from_json(c);
  ASSERT_TRUE(cat.ok()) << cat.status().to_string();
  const InstanceTypeInfo* x = cat->find("ml.x");
  ASSERT_NE(x, nullptr);
  EXPECT_EQ(x->memory_mib, 192 * 1024);
  EXPECT_EQ(x->gpus, 4);
  EXPECT_EQ(x->gpu_model, "A10G");
  EXPECT_EQ(x->price_micros_per_hour, 2'250'000);
}

TEST(Catalog, LoadFileReportsTheFile) {
  testing::TempDir dir;
  const std::string path = dir.file("catalog.json");
  {
    std::ofstream(path) << R"([{"InstanceType": "ml.x", "Gpus": 0, "VCpus": 2, "MemoryGiB": 4,
                              "NetworkGbps": 5, "PricePerHour": "0.1"}])";
  }
  Result<Catalog> ok = Catalog::load_file(path);
  ASSERT_TRUE(ok.ok()) << ok.status().to_string();
  EXPECT_EQ(ok->find("ml.x")->price_micros_per_hour, 100'000);
  { std::ofstream(path) << "[{]"; }
  Result<Catalog> bad = Catalog::load_file(path);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find(path), std::string::npos);
  Result<Catalog> missing = Catalog::load_file(dir.file("absent.json"));
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("absent.json"), std::string::npos);
}

}  // namespace
}  // namespace gf
