// plan_model GRAPH [PLAN_OUT]: compiles a graph (native JSON or .onnx) with
// npuplan's C++ API, prints its streams and events, verifies and simulates
// the plan, and writes the plan file (the bytes `npuplan compile` writes).
#include <npuplan/api/npuplan.h>

#include <fstream>
#include <iostream>

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: plan_model GRAPH [PLAN_OUT]\n";
    return 2;
  }
  std::cout << "npuplan " << NPUPLAN_VERSION_STRING << "\n";

  npuplan::api::CompileOptions options;
  options.options["ge.autoMultistreamParallelMode"] = "CriticalPath:4";  // any --option KEY=VALUE
  absl::StatusOr<npuplan::api::Plan> plan = npuplan::api::CompileFile(argv[1], options);
  if (!plan.ok()) {  // the CLI's error text: "<file>: <what is wrong>"
    std::cerr << "error: " << plan.status().message() << "\n";
    return 1;
  }

  const npuplan::api::PlanSummary summary = plan->summary();
  std::cout << summary.name << ": " << summary.nodes << " nodes, " << summary.logical_streams
            << " logical / " << summary.physical_streams << " physical streams, " << summary.events
            << " events, memory peak " << plan->memory().peak << " bytes\n";
  for (const npuplan::api::StreamInfo& s : plan->streams()) {
    std::cout << "  stream " << s.id << ": " << s.num_nodes << " nodes, " << s.tasks << " tasks\n";
  }
  for (const npuplan::api::EventInfo& e : plan->events()) {
    std::cout << "  " << e.kind << " " << e.id << ": " << e.send << " (stream " << e.send_stream
              << ") -> " << e.recv << " (stream " << e.recv_stream << ")\n";
  }

  if (absl::Status verified = plan->Verify(); !verified.ok()) {
    std::cerr << "error: " << verified.message() << "\n";
    return 1;
  }
  absl::StatusOr<npuplan::api::SimulationResult> sim = plan->Simulate();
  if (!sim.ok()) {
    std::cerr << "error: " << sim.status().message() << "\n";
    return 1;
  }
  std::cout << "verified; simulated makespan " << sim->makespan_us << " us (lower bound "
            << sim->lower_bound_us << " us)\n";

  if (argc > 2) std::ofstream(argv[2], std::ios::binary) << plan->ToJson();
  return 0;
}
