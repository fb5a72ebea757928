// Fuzzes the kernel-case reader (npuplan/kernel/kernel_graph.h): any text is
// rejected with a Status or gives a graph whose serialization reads back to
// the same text.
#include <string>

#include "fuzz/fuzz_util.h"
#include "npuplan/kernel/kernel_graph.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace npuplan::kernel;
  CacheConfig config;
  absl::StatusOr<KernelGraph> graph = ParseKernelGraph(npuplan::fuzz::AsText(data, size), config, "fuzz.json");
  if (!graph.ok()) return 0;
  std::string text = KernelGraphToJson(*graph);
  absl::StatusOr<KernelGraph> again = ParseKernelGraph(text, config, "fuzz-roundtrip.json");
  FUZZ_CHECK(again.ok(), "written kernel graph does not read back: " + std::string(again.status().message()));
  FUZZ_CHECK(KernelGraphToJson(*again) == text, "kernel graph JSON round trip is not stable");
  return 0;
}
