// make_seeds OUT_DIR: writes the generated part of the fuzz seed corpora,
// OUT_DIR/<harness>/<name>, so that no binary seed is kept in the repository.
// scripts/fuzz.sh adds the text inputs of testdata/ and tests/bad_inputs/.
//   graph/    transformer graphs (labels, If/While subgraphs, dynamic dims)
//             and random DAGs from npuplan/gen
//   plan/     compiled plans of some of those graphs
//   onnx/     small ModelProtos built with the protobuf API (Add/MatMul
//             chains, an If with two branches, a Reshape on a Shape)
//   kernel/   matmul / flash-attention / conv kernel graphs
//   options/  every known option with its default, and some typical values
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "npuplan/compiler/compiler.h"
#include "npuplan/gen/graph_generator.h"
#include "npuplan/ir/graph_json.h"
#include "npuplan/kernel/generator.h"
#include "npuplan/kernel/kernel_graph.h"
#include "npuplan/pass/options.h"
#include "npuplan/plan/plan_json.h"
#include "onnx/onnx_pb.h"

namespace fs = std::filesystem;
namespace npuplan {
namespace {

bool Write(const fs::path& dir, const std::string& name, const std::string& bytes) {
  fs::create_directories(dir);
  std::ofstream out(dir / name, std::ios::binary);
  out << bytes;
  return static_cast<bool>(out);
}

std::vector<GeneratorOptions> Graphs() {
  std::vector<GeneratorOptions> out;
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    GeneratorOptions o;
    o.seed = seed;
    o.layers = 1 + static_cast<int64_t>(seed % 2);
    o.hidden = 64;
    o.seq = 16;
    o.control_edge_prob = 0.3;
    o.stream_label_prob = seed % 2 == 0 ? 0.5 : 0.0;
    o.if_every = seed == 3 ? 1 : 0;
    o.while_every = seed == 5 ? 1 : 0;
    o.dynamic_prob = seed == 4 ? 0.5 : 0.0;
    o.dynamic_input = seed == 6;
    out.push_back(o);
  }
  return out;
}

void AddIo(onnx::ValueInfoProto* vi, const std::string& name, std::vector<int64_t> dims) {
  vi->set_name(name);
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) {
    if (d < 0) {
      tt->mutable_shape()->add_dim()->set_dim_param("N");
    } else {
      tt->mutable_shape()->add_dim()->set_dim_value(d);
    }
  }
}
onnx::NodeProto* AddNode(onnx::GraphProto* g, const std::string& op, std::vector<std::string> in,
                         std::vector<std::string> out) {
  auto* n = g->add_node();
  n->set_op_type(op);
  n->set_name(out.empty() ? op : out[0] + "_" + op);
  for (const auto& s : in) n->add_input(s);
  for (const auto& s : out) n->add_output(s);
  return n;
}
onnx::ModelProto NewModel(int64_t opset) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  auto* op = m.add_opset_import();
  op->set_domain("");
  op->set_version(opset);
  m.mutable_graph()->set_name("g");
  return m;
}

std::vector<std::pair<std::string, std::string>> OnnxSeeds() {
  std::vector<std::pair<std::string, std::string>> out;
  {  // x → Relu → Add(x) → MatMul(W) → y, with a dynamic batch dim
    onnx::ModelProto m = NewModel(13);
    auto* g = m.mutable_graph();
    AddIo(g->add_input(), "x", {-1, 4});
    auto* w = g->add_initializer();
    w->set_name("W");
    w->add_dims(4);
    w->add_dims(4);
    w->set_data_type(onnx::TensorProto::FLOAT);
    for (int i = 0; i < 16; ++i) w->add_float_data(0.25f);
    AddNode(g, "Relu", {"x"}, {"r"});
    AddNode(g, "Add", {"r", "x"}, {"a"});
    AddNode(g, "MatMul", {"a", "W"}, {"y"});
    AddIo(g->add_output(), "y", {-1, 4});
    out.push_back({"chain.onnx", m.SerializeAsString()});
  }
  {  // If with two branches capturing an outer value
    onnx::ModelProto m = NewModel(13);
    auto* g = m.mutable_graph();
    AddIo(g->add_input(), "x", {2, 3});
    auto* c = g->add_input();
    c->set_name("cond");
    c->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::BOOL);
    c->mutable_type()->mutable_tensor_type()->mutable_shape();
    auto* n = AddNode(g, "If", {"cond"}, {"y"});
    for (const char* branch : {"then_branch", "else_branch"}) {
      auto* a = n->add_attribute();
      a->set_name(branch);
      a->set_type(onnx::AttributeProto::GRAPH);
      auto* b = a->mutable_g();
      b->set_name(branch);
      AddNode(b, std::string(branch) == "then_branch" ? "Relu" : "Sigmoid", {"x"}, {std::string(branch) + "_out"});
      AddIo(b->add_output(), std::string(branch) + "_out", {2, 3});
    }
    AddIo(g->add_output(), "y", {2, 3});
    out.push_back({"if.onnx", m.SerializeAsString()});
  }
  {  // Shape → Gather → Concat → Reshape (shape folding)
    onnx::ModelProto m = NewModel(16);
    auto* g = m.mutable_graph();
    AddIo(g->add_input(), "x", {-1, 2, 3});
    AddNode(g, "Shape", {"x"}, {"s"});
    auto* idx = g->add_initializer();
    idx->set_name("i0");
    idx->set_data_type(onnx::TensorProto::INT64);
    idx->add_int64_data(0);
    idx->add_dims(1);
    auto* six = g->add_initializer();
    six->set_name("six");
    six->set_data_type(onnx::TensorProto::INT64);
    six->add_int64_data(6);
    six->add_dims(1);
    AddNode(g, "Gather", {"s", "i0"}, {"b"});
    auto* cat = AddNode(g, "Concat", {"b", "six"}, {"shape"});
    auto* axis = cat->add_attribute();
    axis->set_name("axis");
    axis->set_type(onnx::AttributeProto::INT);
    axis->set_i(0);
    AddNode(g, "Reshape", {"x", "shape"}, {"y"});
    AddIo(g->add_output(), "y", {-1, 6});
    out.push_back({"reshape.onnx", m.SerializeAsString()});
  }
  return out;
}

int Main(const fs::path& dir) {
  int n = 0, failed = 0;
  auto put = [&](const std::string& sub, const std::string& name, const std::string& bytes) {
    if (Write(dir / sub, name, bytes)) {
      ++n;
    } else {
      ++failed;
      std::fprintf(stderr, "make_seeds: cannot write %s/%s\n", sub.c_str(), name.c_str());
    }
  };
  int i = 0;
  for (const GeneratorOptions& g : Graphs()) {
    ++i;
    absl::StatusOr<Model> model = GenerateTransformer(g);
    if (!model.ok()) continue;
    put("graph", "transformer" + std::to_string(i) + ".json", WriteGraphJson(*model));
    CompileConfig config;
    config.read_environment = false;
    if (i % 3 == 0) config.option_overrides["ge.event"] = "notify";
    DecisionLog log(false);
    Statistics stats;
    absl::StatusOr<Plan> plan = Compile(*model, config, log, stats);
    if (plan.ok()) put("plan", "transformer" + std::to_string(i) + ".plan.json", WritePlanJson(*plan));
  }
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    put("graph", "dag" + std::to_string(seed) + ".json",
        WriteGraphJson(GenerateRandomDag(12, 3, seed, /*hccl_every=*/3)));
  }
  for (const auto& [name, bytes] : OnnxSeeds()) put("onnx", name, bytes);
  kernel::CacheConfig cache;
  for (const char* kind : {"matmul", "flash-attention", "conv"}) {
    kernel::GeneratorOptions o;
    o.kind = kernel::ParseGraphKind(kind).value();
    o.m = o.n = o.k = 2;
    o.seq = 2;
    o.layers = 2;
    o.width = 3;
    absl::StatusOr<kernel::KernelGraph> g = kernel::GenerateKernelGraph(o, cache);
    if (g.ok()) put("kernel", std::string(kind) + ".json", kernel::KernelGraphToJson(*g));
  }
  std::string all;
  for (const OptionSpec& spec : KnownOptions()) {
    if (spec.default_value.empty()) continue;
    std::string line = spec.name + "=" + spec.default_value;
    all += line + "\n";
  }
  put("options", "defaults.txt", all);
  put("options", "loadbalance.txt", "ge.autoMultistreamParallelMode=LoadBalance:4\nge.streamMaxParallelNum=AIcoreEngine:3\n");
  put("options", "single.txt", "ge.enableSingleStream=true\n");
  put("options", "notify.txt", "ge.event=notify\nnpuplan.eventOptimization=ge\n");
  put("options", "reorder.txt", "ge.autoMultistreamParallelMode=CriticalPath:4\nnpuplan.stream.reorder=true\n");
  std::printf("make_seeds: %d seeds written to %s\n", n, dir.c_str());
  return failed == 0 ? 0 : 1;
}

}  // namespace
}  // namespace npuplan

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_seeds OUT_DIR\n");
    return 2;
  }
  return npuplan::Main(argv[1]);
}
