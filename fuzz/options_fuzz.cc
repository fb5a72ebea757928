// Fuzzes option parsing (npuplan/pass/options.h) the way `npuplan compile`
// uses it: each input line is one `--option KEY=VALUE`. The assignments are
// parsed, validated, the pipeline they select is built, and a small fixed
// graph is compiled with them: a bad value must be an InvalidArgument naming
// the option, never a crash inside a pass. The raw lines are also fed to the
// two structured-value parsers.
#include <string>
#include <vector>

#include "fuzz/fuzz_util.h"
#include "npuplan/compiler/compiler.h"
#include "npuplan/gen/graph_generator.h"
#include "npuplan/pass/options.h"

namespace {

const npuplan::Model& SmallModel() {
  static const npuplan::Model* model = [] {
    npuplan::GeneratorOptions g;
    g.layers = 1;
    g.hidden = 64;
    g.seq = 16;
    g.stream_label_prob = 1.0;
    return new npuplan::Model(npuplan::GenerateTransformer(g).value());
  }();
  return *model;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  (void)SmallModel();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace npuplan;
  if (size > 4096) return 0;  // options are short; keep the compile cheap
  std::string_view text = fuzz::AsText(data, size);
  CompileConfig config;
  config.read_environment = false;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    (void)ParseAutoMultistreamMode(line, /*from_graph_attr=*/(line.size() & 1) != 0);
    (void)ParseStreamMaxParallelNum(line);
    absl::StatusOr<std::pair<std::string, std::string>> kv = ParseOptionAssignment(line);
    if (kv.ok()) config.option_overrides[kv->first] = kv->second;
    start = end + 1;
  }
  CompileOptions opts = CompileOptions::FromModel(SmallModel(), config.option_overrides, false);
  if (!opts.Validate().ok()) return 0;
  if (!BuildDefaultPipeline(opts).ok()) return 0;
  DecisionLog log(/*keep=*/false);
  Statistics stats;
  absl::StatusOr<Plan> plan = Compile(SmallModel(), config, log, stats);
  // Compile verifies its own result: an Internal error here is a verifier
  // failure on a plan we produced, i.e. a bug.
  FUZZ_CHECK(plan.ok() || plan.status().code() != absl::StatusCode::kInternal,
             "compile produced an unverifiable plan: " + std::string(plan.status().message()));
  return 0;
}
