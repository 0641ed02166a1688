// kubectl's JSONPath templates and label selectors (core/jsonpath.h, core/label_selector.h): what
// a person types after -o jsonpath=, -o custom-columns= and -l. The input is a template, then
// optionally "\n@@doc\n" and a JSON/YAML document to render it over (a fixed one otherwise).
//
// Invariants checked:
//  - parsing never crashes; a refused template, column spec or selector has a message;
//  - a parsed template renders without crashing, its output bounded by kMaxOutputBytes;
//  - rendering is a pure function: twice over the same document gives the same text;
//  - the same text read as custom-columns and as a selector is either refused with a message or
//    gives cells (one per column) / a match answer.
#include <string>

#include "core/jsonpath.h"
#include "core/label_selector.h"
#include "fuzz_support.h"

namespace gf {
namespace {

const Json& default_doc() {
  static const Json doc = Json::parse(R"({"kind": "List", "items": [
      {"metadata": {"name": "a", "labels": {"app": "x", "tier": "gpu"}},
       "status": {"phase": "Running", "n": 3, "list": [1, 2, {"deep": [true, null]}]}},
      {"metadata": {"name": "b"}, "status": {"phase": "Failed", "n": 7.5}}]})");
  return doc;
}

}  // namespace
}  // namespace gf

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gf;
  if (size > fuzz::kMaxInputBytes) return -1;
  const std::string_view text = fuzz::as_text(data, size);
  auto [tmpl, doc_text] = fuzz::split_once(text, "\n@@doc\n");
  Json doc = default_doc();
  if (!doc_text.empty() && !fuzz::parse_one(doc_text, doc)) return 0;

  auto parsed = jsonpath::parse(tmpl);
  if (!parsed.ok()) {
    FUZZ_CHECK_ERROR(parsed.status());
  } else {
    auto once = jsonpath::render(**parsed, doc);
    auto twice = jsonpath::render(**parsed, doc);
    FUZZ_CHECK(once.ok() == twice.ok(), "render is not deterministic");
    if (once.ok()) {
      FUZZ_CHECK(*once == *twice, "render is not deterministic");
      FUZZ_CHECK(once->size() <= jsonpath::kMaxOutputBytes + (1 << 20), "output unbounded");
    } else {
      FUZZ_CHECK_ERROR(once.status());
    }
  }
  auto columns = jsonpath::parse_columns(tmpl);
  if (!columns.ok()) {
    FUZZ_CHECK_ERROR(columns.status());
  } else {
    for (const Json& item : doc.is_object() && doc.contains("items") && doc["items"].is_array()
                                ? doc["items"]
                                : Json::array({doc})) {
      auto cells = jsonpath::column_cells(*columns, item);
      if (cells.ok()) {
        FUZZ_CHECK(cells->size() == columns->size(), "one cell per column");
      } else {
        FUZZ_CHECK_ERROR(cells.status());
      }
    }
  }
  auto selector = LabelSelector::parse(tmpl);
  if (!selector.ok()) {
    FUZZ_CHECK_ERROR(selector.status());
  } else if (doc.is_object() && doc.contains("items") && doc["items"].is_array()) {
    for (const Json& item : doc["items"]) {
      if (item.is_object() && item.contains("metadata") && item["metadata"].is_object()) {
        (void)selector->matches(item["metadata"].value("labels", Json::object()));
      }
    }
  }
  return 0;
}
