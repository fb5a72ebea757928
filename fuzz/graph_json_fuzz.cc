// Fuzzes the graph JSON reader (npuplan/ir/graph_json.h): any text is either
// rejected with a Status or gives a model that passes VerifyStructure and
// survives a write → read round trip unchanged.
#include <string>

#include "fuzz/fuzz_util.h"
#include "npuplan/ir/graph_json.h"
#include "npuplan/ir/verifier.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace npuplan;
  absl::StatusOr<Model> model = ParseGraphJson(fuzz::AsText(data, size), "fuzz.json");
  if (!model.ok()) return 0;
  absl::Status s = VerifyStructure(*model);
  FUZZ_CHECK(s.ok(), "accepted graph fails VerifyStructure: " + std::string(s.message()));
  std::string text = WriteGraphJson(*model);
  absl::StatusOr<Model> again = ParseGraphJson(text, "fuzz-roundtrip.json");
  FUZZ_CHECK(again.ok(), "written graph does not read back: " + std::string(again.status().message()));
  FUZZ_CHECK(WriteGraphJson(*again) == text, "graph JSON round trip is not stable");
  return 0;
}
