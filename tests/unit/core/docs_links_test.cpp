// The repository stands alone (docs/style.md): every link of README.md and docs/*.md resolves to
// a file or folder inside it, and neither they nor the code cite a specification a user of the
// repository does not have.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

namespace gf {
namespace {

namespace fs = std::filesystem;

const fs::path kRoot = GPUFLEET_SOURCE_DIR;

std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<fs::path> documents() {
  std::vector<fs::path> docs = {kRoot / "README.md"};
  for (const auto& e : fs::directory_iterator(kRoot / "docs")) {
    if (e.path().extension() == ".md") docs.push_back(e.path());
  }
  return docs;
}

TEST(DocsStandAlone, EveryMarkdownLinkResolvesInsideTheRepository) {
  // [text](target) with a relative target (web links and in-page anchors are not files).
  static const std::regex kLink(R"(\]\(([^)\s#]+)(#[^)]*)?\))");
  std::vector<std::string> broken;
  size_t links = 0;
  for (const fs::path& doc : documents()) {
    const std::string text = read(doc);
    for (auto it = std::sregex_iterator(text.begin(), text.end(), kLink);
         it != std::sregex_iterator(); ++it) {
      const std::string target = (*it)[1].str();
      if (target.rfind("http://", 0) == 0 || target.rfind("https://", 0) == 0) continue;
      ++links;
      const fs::path resolved = fs::weakly_canonical(doc.parent_path() / target);
      const bool inside = resolved.string().rfind(fs::weakly_canonical(kRoot).string(), 0) == 0;
      if (!inside || !fs::exists(resolved)) {
        broken.push_back(doc.filename().string() + ": " + target);
      }
    }
  }
  EXPECT_GT(links, 10u) << "the link pattern found almost nothing: is it still right?";
  EXPECT_TRUE(broken.empty()) << [&] {
    std::string s;
    for (const auto& b : broken) s += "  " + b + "\n";
    return s;
  }();
}

// `docs/x.md` named in running text (not as a link) must exist too.
TEST(DocsStandAlone, EveryNamedDocExists) {
  static const std::regex kNamed(R"(docs/([A-Za-z0-9_-]+\.md))");
  std::vector<std::string> missing;
  std::vector<fs::path> files = documents();
  for (const auto& e : fs::recursive_directory_iterator(kRoot / "src")) files.push_back(e.path());
  for (const fs::path& f : files) {
    if (!fs::is_regular_file(f)) continue;
    const std::string text = read(f);
    for (auto it = std::sregex_iterator(text.begin(), text.end(), kNamed);
         it != std::sregex_iterator(); ++it) {
      if (!fs::exists(kRoot / "docs" / (*it)[1].str()))
        missing.push_back(fs::relative(f, kRoot).string() + ": " + (*it)[0].str());
    }
  }
  EXPECT_TRUE(missing.empty()) << [&] {
    std::string s;
    for (const auto& m : missing) s += "  " + m + "\n";
    return s;
  }();
}

TEST(DocsStandAlone, NeitherDocsNorCodeCiteAFileOutsideTheRepository) {
  static const std::regex kOutside(R"((\.\./shared|SPEC\.md|SPEC §|DESIGN\.md|STYLE\.md|seeds/))");
  std::vector<std::string> found;
  std::vector<fs::path> files = documents();
  for (const char* dir : {"src", "scripts", "examples"}) {
    for (const auto& e : fs::recursive_directory_iterator(kRoot / dir)) files.push_back(e.path());
  }
  for (const fs::path& f : files) {
    if (!fs::is_regular_file(f)) continue;
    const std::string text = read(f);
    std::smatch m;
    if (std::regex_search(text, m, kOutside))
      found.push_back(fs::relative(f, kRoot).string() + ": " + m.str());
  }
  EXPECT_TRUE(found.empty()) << [&] {
    std::string s;
    for (const auto& x : found) s += "  " + x + "\n";
    return s;
  }();
}

}  // namespace
}  // namespace gf
