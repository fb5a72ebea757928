// npuplan's public C++ API (docs/api.md): load a model, compile it into a
// verified plan, read the plan's streams, events, memory and summary, verify,
// simulate and run it; memory-plan an interval set; plan a kernel case.
//
//   #include <npuplan/api/npuplan.h>
//   auto plan = npuplan::api::CompileFile("model.onnx", {.options = {{"ge.enableSingleStream",
//   "true"}}}); if (!plan.ok()) { std::cerr << plan.status().message() << "\n"; return 1; } for
//   (const auto& s : plan->streams()) std::cout << s.id << ": " << s.num_nodes << " nodes\n";
//
// Errors are absl::Status values whose message is the CLI's `error:` text.
// Only the headers under npuplan/api/ are public; everything else is internal.
#ifndef NPUPLAN_API_NPUPLAN_H_
#define NPUPLAN_API_NPUPLAN_H_

#include "npuplan/api/compile.h"
#include "npuplan/api/kernel.h"
#include "npuplan/api/memplan.h"
#include "npuplan/api/model.h"
#include "npuplan/api/plan.h"
#include "npuplan/api/version.h"

#endif  // NPUPLAN_API_NPUPLAN_H_
