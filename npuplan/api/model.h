// npuplan public API: a model to compile (docs/api.md).
//
// A Model is loaded from a native graph file (npuplan.graph/1 JSON), a plan
// file (its final graph), an ONNX file or ONNX bytes, graph JSON text, or
// built in code with GraphBuilder. Loading does what `npuplan compile FILE`
// does before compiling, with the same errors (absl::Status; the message is
// the text after `error: ` of the CLI).
#ifndef NPUPLAN_API_MODEL_H_
#define NPUPLAN_API_MODEL_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "absl/status/statusor.h"

namespace npuplan::api {

namespace internal {
struct Access;
}  // namespace internal

// Bounds of the graph and plan readers (0 = the library's default, which the
// CLI's --max-nodes … --help prints).
struct ReadLimits {
  int64_t max_nodes = 0;          // nodes in all graphs
  int64_t max_edges = 0;          // data + control inputs in all graphs
  int64_t max_string_bytes = 0;   // bytes of one JSON string or key
  int64_t max_attr_elements = 0;  // values inside one attribute value
  int64_t max_depth = 0;          // subgraph nesting, list/map nesting in an attribute
  // Bytes of one input file the call reads (graph, plan, .onnx, --engines
  // file): `--max-file-bytes`. Only regular files are read (no FIFO, device).
  int64_t max_file_bytes = 0;
};

// An ONNX input pinned to a shape (`--input-shape NAME=1x3x48x320`; no dims:
// a scalar).
struct InputShape {
  std::string name;
  std::vector<int64_t> dims;
};

struct LoadOptions {
  std::string engines_file;              // --engines FILE: merged over the built-in engine table
  std::vector<InputShape> input_shapes;  // ONNX --input-shape, in this order
  std::map<std::string, int64_t> dims;   // ONNX --dim NAME=VALUE (symbolic dims)
  bool strict_shapes = false;            // ONNX --strict-shapes
  bool allow_unknown_ops = false;        // ONNX --allow-unknown-ops
  // The order graphs are sorted in after reading (`--option
  // ge.topoSortingMode=…`; "" = the graph's own option). CompileFile takes it
  // from CompileOptions::options when it is not set here, as the CLI does.
  std::string topo_sorting_mode;
  ReadLimits limits;  // graph / plan JSON readers
};

class Model {
 public:
  struct Impl;  // opaque: defined inside the library only

  // A file: .onnx → ONNX import; a plan (npuplan.plan/1) → its graph; else a
  // graph (npuplan.graph/1). Errors name the file, as the CLI's do.
  static absl::StatusOr<Model> Load(const std::string& path, const LoadOptions& options = {});
  // Graph (or plan) JSON text; `source` names it in errors.
  static absl::StatusOr<Model> FromJson(std::string_view json, const std::string& source = "<json>",
                                        const LoadOptions& options = {});
  // A serialized onnx.ModelProto; `source` names it in errors, external data
  // is looked up relative to `model_dir` ("" = the current directory).
  static absl::StatusOr<Model> FromOnnx(std::string_view bytes,
                                        const std::string& source = "<onnx>",
                                        const LoadOptions& options = {},
                                        const std::string& model_dir = "");

  Model(const Model& other);  // deep copy
  Model& operator=(const Model& other);
  Model(Model&& other) noexcept;
  Model& operator=(Model&& other) noexcept;
  ~Model();

  const std::string& name() const;  // the root graph's name
  size_t num_nodes() const;         // in all graphs
  size_t num_graphs() const;
  // ONNX import warnings (what the CLI prints as `warning: …`), in order.
  const std::vector<std::string>& warnings() const;
  // The model as npuplan.graph/1 JSON (what `npuplan import` writes).
  std::string ToJson() const;

 private:
  friend struct internal::Access;
  explicit Model(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// An attribute value: int, float, bool, string, or a list of one of these
// (graph-format.md, "Attributes").
using AttrValue = std::variant<int64_t, double, bool, std::string, std::vector<int64_t>,
                               std::vector<double>, std::vector<bool>, std::vector<std::string>>;

struct TensorSpec {
  std::vector<int64_t> shape;  // -1 unknown dim, {-2} unknown rank, {} scalar
  std::string dtype = "float32";
};

struct NodeSpec {
  std::string name;                         // unique in the model
  std::string type;                         // op type: Data, Conv2D, NetOutput, …
  std::string engine;                       // "" = from the op-type table
  std::vector<std::string> inputs;          // "producer:index" ("x" = "x:0")
  std::vector<std::string> control_inputs;  // producer names
  std::vector<TensorSpec> outputs;          // one per output anchor
  std::map<std::string, AttrValue> attrs;   // e.g. {"_stream_label", "s1"}
};

// Builds a single-graph model in code (subgraphs: write graph JSON). Build()
// checks it exactly as the graph reader checks a file.
class GraphBuilder {
 public:
  explicit GraphBuilder(std::string name = "graph");
  GraphBuilder& SetOption(const std::string& key, const std::string& value);  // a session option
  GraphBuilder& AddNode(NodeSpec node);
  // The graph JSON Build() reads (npuplan.graph/1).
  std::string ToJson() const;
  absl::StatusOr<Model> Build(const LoadOptions& options = {}) const;

 private:
  std::string name_;
  std::map<std::string, std::string> options_;
  std::vector<NodeSpec> nodes_;
};

}  // namespace npuplan::api

#endif  // NPUPLAN_API_MODEL_H_
