// npuplan._npuplan: pybind11 bindings of the public C++ API (npuplan/api/);
// the Pythonic front door is python/npuplan/__init__.py (docs/api.md).
//
// Only public headers are included here: what Python can do, a C++ user can.
// Every call that compiles, reads, simulates, runs or plans releases the GIL;
// errors become npuplan.Error subclasses (chosen by status code in
// __init__.py) whose message is the CLI's `error:` text.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <cstdint>
#include <exception>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "npuplan/api/npuplan.h"

namespace py = pybind11;
namespace api = npuplan::api;

namespace {

struct StatusError : std::exception {
  explicit StatusError(const absl::Status& s)
      : code(static_cast<int>(s.code())), message(s.message()) {}
  const char* what() const noexcept override { return message.c_str(); }
  int code;
  std::string message;
};

void Check(const absl::Status& s) {
  if (!s.ok()) throw StatusError(s);
}
template <typename T>
T Unwrap(absl::StatusOr<T> r) {
  if (!r.ok()) throw StatusError(r.status());
  return std::move(r).value();
}

// Status code → exception class, filled by __init__.py (_set_error_classes).
// Leaked on purpose: it must outlive the interpreter's module teardown.
py::dict& ErrorClasses() {
  static auto* classes = new py::dict();
  return *classes;
}

void TranslateStatusError(std::exception_ptr p) {
  try {
    if (p) std::rethrow_exception(p);
  } catch (const StatusError& e) {
    py::object cls = ErrorClasses().contains(py::int_(e.code)) ? ErrorClasses()[py::int_(e.code)]
                     : ErrorClasses().contains(py::int_(-1))
                         ? ErrorClasses()[py::int_(-1)]
                         : py::reinterpret_borrow<py::object>(PyExc_RuntimeError);
    PyErr_SetString(cls.ptr(), e.message.c_str());
  }
}

api::LoadOptions MakeLoadOptions(
    const std::vector<std::pair<std::string, std::vector<int64_t>>>& input_shapes,
    const std::map<std::string, int64_t>& dims, const std::string& engines, bool strict_shapes,
    bool allow_unknown_ops, const std::string& topo_sorting_mode) {
  api::LoadOptions load;
  for (const auto& [name, shape] : input_shapes)
    load.input_shapes.push_back(api::InputShape{name, shape});
  load.dims = dims;
  load.engines_file = engines;
  load.strict_shapes = strict_shapes;
  load.allow_unknown_ops = allow_unknown_ops;
  load.topo_sorting_mode = topo_sorting_mode;
  return load;
}

// kind: "file" (data = path), "json" (graph or plan JSON text), "onnx"
// (serialized ModelProto).
api::Model LoadModel(const std::string& kind, const std::string& data, const std::string& source,
                     const std::string& model_dir, const api::LoadOptions& load) {
  if (kind == "file") return Unwrap(api::Model::Load(data, load));
  if (kind == "json") return Unwrap(api::Model::FromJson(data, source, load));
  if (kind == "onnx") return Unwrap(api::Model::FromOnnx(data, source, load, model_dir));
  throw std::invalid_argument("model kind must be file, json or onnx");
}

template <typename T>
std::string Repr(const char* type, const T& fields) {
  return std::string("<npuplan.") + type + " " + fields + ">";
}

std::string Str(int64_t v) { return std::to_string(v); }

void BindValueTypes(py::module_& m) {
  py::class_<api::StreamInfo>(m, "Stream", "One logical stream of a plan")
      .def_readonly("id", &api::StreamInfo::id)
      .def_readonly("label", &api::StreamInfo::label)
      .def_readonly("physical_count", &api::StreamInfo::physical_count)
      .def_readonly("attached_ids", &api::StreamInfo::attached_ids)
      .def_readonly("hccl_followed_count", &api::StreamInfo::hccl_followed_count)
      .def_readonly("num_nodes", &api::StreamInfo::num_nodes)
      .def_readonly("tasks", &api::StreamInfo::tasks)
      .def("__repr__", [](const api::StreamInfo& s) {
        return Repr("Stream", "id=" + Str(s.id) + " nodes=" + Str(s.num_nodes) + " tasks=" +
                                  Str(s.tasks) + (s.label.empty() ? "" : " label=" + s.label));
      });
  py::class_<api::EventInfo>(m, "Event",
                             "One event or notify: `send` records it, `recv` waits for it")
      .def_readonly("id", &api::EventInfo::id)
      .def_readonly("kind", &api::EventInfo::kind)
      .def_readonly("reason", &api::EventInfo::reason)
      .def_readonly("send", &api::EventInfo::send)
      .def_readonly("recv", &api::EventInfo::recv)
      .def_readonly("send_stream", &api::EventInfo::send_stream)
      .def_readonly("recv_stream", &api::EventInfo::recv_stream)
      .def_readonly("send_attached", &api::EventInfo::send_attached)
      .def_readonly("recv_attached", &api::EventInfo::recv_attached)
      .def("__repr__", [](const api::EventInfo& e) {
        return Repr("Event", e.kind + " " + Str(e.id) + ": " + e.send + " (stream " +
                                 Str(e.send_stream) + ") -> " + e.recv + " (stream " +
                                 Str(e.recv_stream) + ")");
      });
  py::class_<api::NodeInfo>(m, "Node", "A node of a plan with its stream, tasks and events")
      .def_readonly("name", &api::NodeInfo::name)
      .def_readonly("type", &api::NodeInfo::type)
      .def_readonly("engine", &api::NodeInfo::engine)
      .def_readonly("graph", &api::NodeInfo::graph)
      .def_readonly("topo_id", &api::NodeInfo::topo_id)
      .def_readonly("stream", &api::NodeInfo::stream)
      .def_readonly("logical_stream", &api::NodeInfo::logical_stream)
      .def_readonly("attached_streams", &api::NodeInfo::attached_streams)
      .def_readonly("tasks", &api::NodeInfo::tasks)
      .def_readonly("send_events", &api::NodeInfo::send_events)
      .def_readonly("recv_events", &api::NodeInfo::recv_events)
      .def("__repr__", [](const api::NodeInfo& n) {
        return Repr("Node",
                    n.name + " " + n.type + " stream=" + Str(n.stream) + " tasks=" + Str(n.tasks));
      });
  py::class_<api::TensorInfo>(m, "Tensor", "A tensor's place in device memory")
      .def_readonly("node", &api::TensorInfo::node)
      .def_readonly("output", &api::TensorInfo::output)
      .def_readonly("region", &api::TensorInfo::region)
      .def_readonly("offset", &api::TensorInfo::offset)
      .def_readonly("size", &api::TensorInfo::size)
      .def_readonly("first_use", &api::TensorInfo::first_use)
      .def_readonly("last_use", &api::TensorInfo::last_use)
      .def_readonly("buffer", &api::TensorInfo::buffer)
      .def_readonly("stream", &api::TensorInfo::stream);
  py::class_<api::MemoryInfo>(m, "Memory", "The plan's device memory")
      .def_readonly("planned", &api::MemoryInfo::planned)
      .def_readonly("alignment", &api::MemoryInfo::alignment)
      .def_readonly("peak", &api::MemoryInfo::peak)
      .def_readonly("lower_bound", &api::MemoryInfo::lower_bound)
      .def_readonly("optimal", &api::MemoryInfo::optimal)
      .def_readonly("region_bytes", &api::MemoryInfo::region_bytes)
      .def_readonly("tensors", &api::MemoryInfo::tensors)
      .def_readonly("dynamic_tensors", &api::MemoryInfo::dynamic_tensors)
      .def("__repr__", [](const api::MemoryInfo& mem) {
        return Repr("Memory", "peak=" + Str(mem.peak) + " lower_bound=" + Str(mem.lower_bound));
      });
  py::class_<api::PlanSummary>(m, "Summary", "A plan's headline numbers")
      .def_readonly("name", &api::PlanSummary::name)
      .def_readonly("nodes", &api::PlanSummary::nodes)
      .def_readonly("graphs", &api::PlanSummary::graphs)
      .def_readonly("logical_streams", &api::PlanSummary::logical_streams)
      .def_readonly("physical_streams", &api::PlanSummary::physical_streams)
      .def_readonly("attached_streams", &api::PlanSummary::attached_streams)
      .def_readonly("events", &api::PlanSummary::events)
      .def_readonly("notifies", &api::PlanSummary::notifies)
      .def_readonly("sync_pairs", &api::PlanSummary::sync_pairs)
      .def_readonly("event_counts", &api::PlanSummary::event_counts)
      .def_readonly("memory_peak", &api::PlanSummary::memory_peak)
      .def_readonly("memory_lower_bound", &api::PlanSummary::memory_lower_bound)
      .def_readonly("stream_mode", &api::PlanSummary::stream_mode)
      .def_readonly("auto_mode", &api::PlanSummary::auto_mode)
      .def_readonly("stages", &api::PlanSummary::stages)
      .def("__repr__", [](const api::PlanSummary& s) {
        return Repr("Summary", s.name + ": " + Str(s.nodes) + " nodes in " + Str(s.graphs) +
                                   " graphs, " + Str(s.logical_streams) + " logical / " +
                                   Str(s.physical_streams) + " physical streams, " + Str(s.events) +
                                   " events, " + Str(s.notifies) + " notifies, memory peak " +
                                   Str(s.memory_peak) + " bytes");
      });
  py::class_<api::StreamBusy>(m, "StreamBusy", "Simulated busy time of one stream")
      .def_readonly("stream", &api::StreamBusy::stream)
      .def_readonly("tasks", &api::StreamBusy::tasks)
      .def_readonly("busy_us", &api::StreamBusy::busy_us)
      .def_readonly("utilisation", &api::StreamBusy::utilisation);
  py::class_<api::SimulationResult>(m, "Simulation", "What `npuplan simulate` reports")
      .def_readonly("makespan_us", &api::SimulationResult::makespan_us)
      .def_readonly("lower_bound_us", &api::SimulationResult::lower_bound_us)
      .def_readonly("critical_path_us", &api::SimulationResult::critical_path_us)
      .def_readonly("total_work_us", &api::SimulationResult::total_work_us)
      .def_readonly("critical_path", &api::SimulationResult::critical_path)
      .def_readonly("streams", &api::SimulationResult::streams)
      .def_readonly("report", &api::SimulationResult::report_text)
      .def("to_json", [](const api::SimulationResult& r) { return r.report_json; })
      .def("__repr__", [](const api::SimulationResult& r) {
        return Repr("Simulation", "makespan_us=" + std::to_string(r.makespan_us) +
                                      " lower_bound_us=" + std::to_string(r.lower_bound_us));
      });
  py::class_<api::RunResult>(m, "RunResult", "What `npuplan run` reports")
      .def_readonly("runs", &api::RunResult::runs)
      .def_readonly("tasks", &api::RunResult::tasks)
      .def_readonly("streams", &api::RunResult::streams)
      .def_readonly("violations", &api::RunResult::violations)
      .def_readonly("memory_races", &api::RunResult::memory_races)
      .def_readonly("runs_with_violations", &api::RunResult::runs_with_violations)
      .def_readonly("messages", &api::RunResult::messages)
      .def_readonly("skipped_events", &api::RunResult::skipped_events)
      .def_readonly("wall_ms", &api::RunResult::wall_ms)
      .def("__repr__", [](const api::RunResult& r) {
        return Repr("RunResult", Str(r.tasks) + " tasks on " + Str(r.streams) + " streams, " +
                                     Str(r.runs) + " run(s): " + Str(r.violations) +
                                     " violation(s)");
      });
}

void BindModel(py::module_& m) {
  py::class_<api::Model>(m, "Model",
                         "A loaded model (npuplan.load); compile it any number of times")
      .def_property_readonly("name", &api::Model::name)
      .def_property_readonly("num_nodes", &api::Model::num_nodes)
      .def_property_readonly("num_graphs", &api::Model::num_graphs)
      .def_property_readonly("warnings", &api::Model::warnings)
      .def("to_json",
           [](const api::Model& model) {
             std::string json;
             {
               py::gil_scoped_release release;
               json = model.ToJson();
             }
             return json;
           })
      .def("__repr__", [](const api::Model& model) {
        return Repr("Model", model.name() + ": " + std::to_string(model.num_nodes()) + " nodes");
      });
}

void BindPlan(py::module_& m) {
  py::class_<api::Plan>(m, "Plan", "A compiled, verified execution plan")
      .def_static(
          "read",
          [](const std::filesystem::path& path) {
            py::gil_scoped_release release;
            return Unwrap(api::Plan::Read(path.string()));
          },
          py::arg("path"), "Read a plan file (npuplan.plan/1)")
      .def_static(
          "from_json",
          [](const std::string& text, const std::string& source) {
            py::gil_scoped_release release;
            return Unwrap(api::Plan::FromJson(text, source));
          },
          py::arg("text"), py::arg("source") = "<json>")
      .def_property_readonly("name", &api::Plan::name)
      .def_property_readonly("num_nodes", &api::Plan::num_nodes)
      .def_property_readonly("streams", &api::Plan::streams, "The logical streams (list of Stream)")
      .def_property_readonly("events", &api::Plan::events, "Every event and notify (list of Event)")
      .def_property_readonly("memory", &api::Plan::memory, "The device memory plan (Memory)")
      .def_property_readonly("warnings", &api::Plan::warnings, "ONNX import warnings")
      .def_property_readonly("decisions", &api::Plan::decisions,
                             "Decision log (JSON lines; keep_decisions=True)")
      .def("summary", &api::Plan::summary, "The headline numbers (Summary)")
      .def("_node", &api::Plan::node)
      .def("_node_at", &api::Plan::node_at)
      .def("_node_names", &api::Plan::node_names)
      .def(
          "to_json",
          [](const api::Plan& plan) {
            std::string json;
            {
              py::gil_scoped_release release;
              json = plan.ToJson();
            }
            return json;
          },
          "The plan file, byte-identical to `npuplan compile -o`")
      .def(
          "write",
          [](const api::Plan& plan, const std::filesystem::path& path) {
            absl::Status s;
            {
              py::gil_scoped_release release;
              s = plan.Write(path.string());
            }
            Check(s);
          },
          py::arg("path"),
          "Write the plan file (to_json()) atomically, as `npuplan compile -o` does")
      .def(
          "verify",
          [](const api::Plan& plan, bool partial) {
            absl::Status s;
            {
              py::gil_scoped_release release;
              s = plan.Verify(api::VerifyOptions{partial});
            }
            Check(s);
          },
          py::arg("partial") = false,
          "Re-check the plan with the independent verifier (raises on a violation); partial=True "
          "checks only the stages the plan claims, as `npuplan verify --partial`")
      .def(
          "simulate",
          [](const api::Plan& plan, std::optional<std::filesystem::path> trace,
             double launch_overhead_us, double record_us, double wait_latency_us,
             bool ignore_cost_attr) {
            api::SimulateOptions o;
            o.trace_file = trace ? trace->string() : "";
            o.launch_overhead_us = launch_overhead_us;
            o.record_us = record_us;
            o.wait_latency_us = wait_latency_us;
            o.ignore_cost_attr = ignore_cost_attr;
            py::gil_scoped_release release;
            return Unwrap(plan.Simulate(o));
          },
          py::arg("trace") = py::none(), py::arg("launch_overhead_us") = 1.0,
          py::arg("record_us") = 0.5, py::arg("wait_latency_us") = 1.0,
          py::arg("ignore_cost_attr") = false)
      .def(
          "run",
          [](const api::Plan& plan, std::optional<uint64_t> jitter, int64_t repeat,
             int64_t jitter_max_us, int64_t stream_skew_us, double time_scale) {
            api::RunOptions o;
            o.jitter_seed = jitter;
            o.repeat = repeat;
            o.jitter_max_us = jitter_max_us;
            o.stream_skew_us = stream_skew_us;
            o.time_scale = time_scale;
            py::gil_scoped_release release;
            return Unwrap(plan.Run(o));
          },
          py::arg("jitter") = py::none(), py::arg("repeat") = 1, py::arg("jitter_max_us") = 200,
          py::arg("stream_skew_us") = 0, py::arg("time_scale") = 0.0)
      .def("__repr__", [](const api::Plan& plan) {
        return Repr("Plan", plan.name() + ": " + std::to_string(plan.num_nodes()) + " nodes");
      });
}

// After BindModel and BindPlan, so that the signatures name Model and Plan.
void BindLoadAndCompile(py::module_& m) {
  m.def("_load",
        [](const std::string& kind, const std::string& data, const std::string& source,
           const std::string& model_dir,
           const std::vector<std::pair<std::string, std::vector<int64_t>>>& input_shapes,
           const std::map<std::string, int64_t>& dims, const std::string& engines,
           bool strict_shapes, bool allow_unknown_ops, const std::string& topo_sorting_mode) {
          api::LoadOptions load = MakeLoadOptions(input_shapes, dims, engines, strict_shapes,
                                                  allow_unknown_ops, topo_sorting_mode);
          py::gil_scoped_release release;
          return LoadModel(kind, data, source, model_dir, load);
        });
  // Loads (kind != "model") or copies `model`, then compiles, all without the GIL.
  m.def(
      "_compile",
      [](const std::string& kind, const std::string& data, const std::string& source,
         const std::string& model_dir, const api::Model* model,
         const std::vector<std::pair<std::string, std::vector<int64_t>>>& input_shapes,
         const std::map<std::string, int64_t>& dims, const std::string& engines, bool strict_shapes,
         bool allow_unknown_ops, const std::map<std::string, std::string>& options,
         bool read_environment, bool verify_each, const std::string& passes, bool keep_decisions) {
        api::CompileOptions co;
        co.options = options;
        co.read_environment = read_environment;
        co.verify_each = verify_each;
        co.passes = passes;
        co.keep_decisions = keep_decisions;
        // --option ge.topoSortingMode also orders the graph the CLI reads.
        auto order = options.find("ge.topoSortingMode");
        api::LoadOptions load =
            MakeLoadOptions(input_shapes, dims, engines, strict_shapes, allow_unknown_ops,
                            order == options.end() ? std::string() : order->second);
        py::gil_scoped_release release;
        if (kind == "model") return Unwrap(api::Compile(*model, co));
        return Unwrap(api::Compile(LoadModel(kind, data, source, model_dir, load), co));
      });
}

void BindMemplan(py::module_& m) {
  py::class_<api::MemplanResult>(m, "MemplanStats",
                                 "What `npuplan memplan` reports besides the offsets")
      .def_readonly("peak", &api::MemplanResult::peak)
      .def_readonly("lower_bound", &api::MemplanResult::lower_bound)
      .def_readonly("optimal", &api::MemplanResult::optimal)
      .def_readonly("greedy_peak", &api::MemplanResult::greedy_peak)
      .def_readonly("greedy_order", &api::MemplanResult::greedy_order)
      .def_readonly("search_nodes", &api::MemplanResult::search_nodes)
      .def_readonly("search_steps", &api::MemplanResult::search_steps)
      .def_readonly("timed_out", &api::MemplanResult::timed_out)
      .def("__repr__", [](const api::MemplanResult& r) {
        return Repr("MemplanStats", "peak=" + Str(r.peak) + " lower_bound=" + Str(r.lower_bound) +
                                        (r.optimal ? " (optimal)" : ""));
      });
  using I64 = py::array_t<int64_t, py::array::c_style | py::array::forcecast>;
  m.def("_memplan",
        [](I64 lower, I64 upper, I64 size, std::optional<I64> alignment,
           std::vector<std::string> ids, std::optional<int64_t> capacity, double time_limit,
           int64_t target, int64_t max_nodes, int64_t max_steps, bool greedy_only) {
          const py::ssize_t n = lower.size();
          if (upper.size() != n || size.size() != n || (alignment && alignment->size() != n) ||
              (!ids.empty() && static_cast<py::ssize_t>(ids.size()) != n)) {
            throw std::invalid_argument(
                "memplan: lower, upper, size (and alignment, ids) must have the same length");
          }
          std::vector<api::Interval> intervals(static_cast<size_t>(n));
          auto lo = lower.unchecked<1>(), up = upper.unchecked<1>(), sz = size.unchecked<1>();
          for (py::ssize_t i = 0; i < n; ++i) {
            api::Interval& v = intervals[static_cast<size_t>(i)];
            if (!ids.empty()) v.id = std::move(ids[static_cast<size_t>(i)]);
            v.lower = lo(i);
            v.upper = up(i);
            v.size = sz(i);
            if (alignment) v.alignment = alignment->unchecked<1>()(i);
          }
          api::MemplanOptions o;
          o.capacity = capacity;
          o.time_limit_seconds = time_limit;
          o.target = target;
          o.max_nodes = max_nodes;
          o.max_steps = max_steps;
          o.greedy_only = greedy_only;
          api::MemplanResult r;
          {
            py::gil_scoped_release release;
            r = Unwrap(api::Memplan(intervals, o));
          }
          I64 offsets(static_cast<py::ssize_t>(r.offsets.size()));
          std::copy(r.offsets.begin(), r.offsets.end(), offsets.mutable_data());
          r.offsets.clear();
          return py::make_tuple(offsets, r);
        });
}

void BindKernel(py::module_& m) {
  py::class_<api::KernelSpill>(m, "KernelSpill")
      .def_readonly("buffer", &api::KernelSpill::buffer)
      .def_readonly("new_offset", &api::KernelSpill::new_offset);
  py::class_<api::KernelMetricsInfo>(m, "KernelMetrics")
      .def_readonly("max_vstay", &api::KernelMetricsInfo::max_vstay)
      .def_readonly("spills", &api::KernelMetricsInfo::spills)
      .def_readonly("extra_movement", &api::KernelMetricsInfo::extra_movement)
      .def_readonly("makespan", &api::KernelMetricsInfo::makespan);
  py::class_<api::KernelPlanResult>(m, "KernelPlan",
                                    "What `npuplan kernel plan` computes for one case")
      .def_readonly("name", &api::KernelPlanResult::name)
      .def_readonly("candidate", &api::KernelPlanResult::candidate)
      .def_readonly("schedule", &api::KernelPlanResult::schedule)
      .def_readonly("offsets", &api::KernelPlanResult::offsets)
      .def_readonly("spills", &api::KernelPlanResult::spills)
      .def_readonly("metrics", &api::KernelPlanResult::metrics)
      .def_readonly("q1_schedule", &api::KernelPlanResult::q1_schedule)
      .def_readonly("q1_metrics", &api::KernelPlanResult::q1_metrics)
      .def("schedule_text", &api::KernelPlanResult::schedule_text)
      .def("memory_text", &api::KernelPlanResult::memory_text)
      .def("spill_text", &api::KernelPlanResult::spill_text)
      .def("q1_schedule_text", &api::KernelPlanResult::q1_schedule_text)
      .def(
          "write",
          [](const api::KernelPlanResult& r, const std::filesystem::path& dir) {
            absl::Status s;
            {
              py::gil_scoped_release release;
              s = r.WriteFiles(dir.string());
            }
            Check(s);
          },
          py::arg("out_dir"), "Write <case>_schedule/_memory/_spill/_q1_schedule.txt into out_dir")
      .def("__repr__", [](const api::KernelPlanResult& r) {
        return Repr("KernelPlan", r.name + " candidate=" + r.candidate +
                                      " spills=" + Str(r.metrics.spills) +
                                      " makespan=" + Str(r.metrics.makespan));
      });
  m.def("_kernel_plan",
        [](const std::string& kind, const std::string& data, const std::string& name,
           const std::string& strategy, const std::string& objective) {
          api::KernelPlanOptions o{strategy, objective};
          py::gil_scoped_release release;
          if (kind == "file") return Unwrap(api::PlanKernelFile(data, o));
          return Unwrap(api::PlanKernelJson(data, name, o));
        });
}

}  // namespace

PYBIND11_MODULE(_npuplan, m) {
  m.doc() = "npuplan's C++ API (npuplan/api/); use the npuplan package";
  m.attr("__version__") = NPUPLAN_VERSION_STRING;
  m.attr("VERSION_MAJOR") = NPUPLAN_VERSION_MAJOR;
  m.attr("VERSION_MINOR") = NPUPLAN_VERSION_MINOR;
  m.attr("VERSION_PATCH") = NPUPLAN_VERSION_PATCH;
  m.def("library_version", [] { return std::string(api::Version()); });
  m.def("_set_error_classes", [](py::dict classes) {
    ErrorClasses().clear();
    for (auto [code, cls] : classes) ErrorClasses()[code] = cls;
  });
  py::register_exception_translator(&TranslateStatusError);
  BindValueTypes(m);
  BindModel(m);
  BindPlan(m);
  BindLoadAndCompile(m);
  BindMemplan(m);
  BindKernel(m);
}
