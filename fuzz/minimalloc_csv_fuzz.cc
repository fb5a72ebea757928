// Fuzzes the MiniMalloc CSV reader (npuplan/memory/minimalloc_csv.h) and the
// independent assignment validator on whatever offsets the file carries.
#include <string>

#include "fuzz/fuzz_util.h"
#include "npuplan/memory/minimalloc_csv.h"
#include "npuplan/memory/plan_validator.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace npuplan::memory;
  absl::StatusOr<MinimallocCsv> csv = ParseMinimallocCsv(npuplan::fuzz::AsText(data, size), "fuzz.csv");
  if (!csv.ok()) return 0;
  if (csv->offsets) {
    ValidationResult r = ValidateIntervalAssignment(csv->problem, *csv->offsets);
    FUZZ_CHECK(r.ok() == r.status.ok(), "validator result and status disagree");
    // A valid file prints and reads back.
    if (r.ok()) {
      std::string text = PrintMinimallocCsv(csv->problem, *csv->offsets);
      absl::StatusOr<MinimallocCsv> again = ParseMinimallocCsv(text, "fuzz-roundtrip.csv");
      FUZZ_CHECK(again.ok(), "printed CSV does not read back: " + std::string(again.status().message()));
      FUZZ_CHECK(PrintMinimallocCsv(again->problem, *again->offsets) == text, "CSV round trip is not stable");
    }
  }
  return 0;
}
