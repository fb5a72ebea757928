// Model and GraphBuilder of the public API.
#include "npuplan/api/model.h"

#include <type_traits>
#include <utility>

#include "nlohmann/json.hpp"
#include "npuplan/api/api_internal.h"
#include "npuplan/ir/graph_json.h"
#include "npuplan/support/file_util.h"
#include "npuplan/support/str_util.h"

namespace npuplan::api {
namespace internal {

GraphReadLimits ToReadLimits(const ReadLimits& limits) {
  GraphReadLimits l;
  if (limits.max_nodes > 0) l.max_nodes = limits.max_nodes;
  if (limits.max_edges > 0) l.max_edges = limits.max_edges;
  if (limits.max_string_bytes > 0) l.max_string_bytes = limits.max_string_bytes;
  if (limits.max_attr_elements > 0) l.max_attr_elements = limits.max_attr_elements;
  if (limits.max_depth > 0) l.max_depth = limits.max_depth;
  return l;
}

SourceOptions ToSourceOptions(const LoadOptions& options) {
  SourceOptions o;
  o.engines_file = options.engines_file;
  for (const InputShape& s : options.input_shapes) {  // the CLI's NAME=1x3x48x320
    o.input_shapes.push_back(StrCat(s.name, "=", StrJoin(s.dims, "x")));
  }
  for (const auto& [name, value] : options.dims) o.dims.push_back(StrCat(name, "=", value));
  o.strict_shapes = options.strict_shapes;
  o.allow_unknown_ops = options.allow_unknown_ops;
  o.topo_sorting_mode = options.topo_sorting_mode;
  o.limits = ToReadLimits(options.limits);
  return o;
}

Model Access::MakeModel(npuplan::Model model, std::vector<std::string> warnings) {
  auto impl = std::make_unique<Model::Impl>();
  impl->model = std::move(model);
  impl->warnings = std::move(warnings);
  return Model(std::move(impl));
}

}  // namespace internal

namespace {
absl::StatusOr<Model> ToModel(absl::StatusOr<internal::LoadedSource> loaded) {
  if (!loaded.ok()) return loaded.status();
  return internal::Access::MakeModel(std::move(loaded->plan.model), std::move(loaded->warnings));
}
}  // namespace

// Every reader below reads files through ReadFile, with the caller's limit.
absl::StatusOr<Model> Model::Load(const std::string& path, const LoadOptions& options) {
  ScopedMaxFileBytes limit(options.limits.max_file_bytes);
  return ToModel(internal::LoadSourceFile(path, internal::ToSourceOptions(options)));
}

absl::StatusOr<Model> Model::FromJson(std::string_view json, const std::string& source,
                                      const LoadOptions& options) {
  ScopedMaxFileBytes limit(options.limits.max_file_bytes);  // the --engines file
  return ToModel(internal::LoadSourceJson(json, source, internal::ToSourceOptions(options)));
}

absl::StatusOr<Model> Model::FromOnnx(std::string_view bytes, const std::string& source,
                                      const LoadOptions& options, const std::string& model_dir) {
  ScopedMaxFileBytes limit(options.limits.max_file_bytes);  // the --engines file
  return ToModel(
      internal::LoadSourceOnnx(bytes, source, model_dir, internal::ToSourceOptions(options)));
}

Model::Model(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Model::Model(const Model& other) : impl_(std::make_unique<Impl>(*other.impl_)) {}
Model& Model::operator=(const Model& other) {
  if (this != &other) impl_ = std::make_unique<Impl>(*other.impl_);
  return *this;
}
Model::Model(Model&& other) noexcept = default;
Model& Model::operator=(Model&& other) noexcept = default;
Model::~Model() = default;

const std::string& Model::name() const { return impl_->model.name(); }
size_t Model::num_nodes() const { return impl_->model.num_nodes(); }
size_t Model::num_graphs() const { return impl_->model.num_graphs(); }
const std::vector<std::string>& Model::warnings() const { return impl_->warnings; }
std::string Model::ToJson() const { return WriteGraphJson(impl_->model); }

GraphBuilder::GraphBuilder(std::string name) : name_(std::move(name)) {}

GraphBuilder& GraphBuilder::SetOption(const std::string& key, const std::string& value) {
  options_[key] = value;
  return *this;
}

GraphBuilder& GraphBuilder::AddNode(NodeSpec node) {
  nodes_.push_back(std::move(node));
  return *this;
}

std::string GraphBuilder::ToJson() const {
  using nlohmann::json;
  json nodes = json::array();
  for (const NodeSpec& n : nodes_) {
    json j = {{"name", n.name}, {"type", n.type}};
    if (!n.engine.empty()) j["engine"] = n.engine;
    if (!n.inputs.empty()) j["inputs"] = n.inputs;
    if (!n.control_inputs.empty()) j["control_inputs"] = n.control_inputs;
    if (!n.outputs.empty()) {
      json outs = json::array();
      for (const TensorSpec& t : n.outputs)
        outs.push_back({{"shape", t.shape}, {"dtype", t.dtype}});
      j["outputs"] = std::move(outs);
    }
    if (!n.attrs.empty()) {
      json attrs = json::object();
      for (const auto& entry : n.attrs) {
        // Not a structured binding: clang 14 cannot capture one.
        const std::string& key = entry.first;
        std::visit([&](const auto& v) { attrs[key] = v; }, entry.second);
      }
      j["attrs"] = std::move(attrs);
    }
    nodes.push_back(std::move(j));
  }
  json g = {{"format", "npuplan.graph/1"}, {"name", name_}, {"nodes", std::move(nodes)}};
  if (!options_.empty()) g["options"] = options_;
  return g.dump(1);
}

absl::StatusOr<Model> GraphBuilder::Build(const LoadOptions& options) const {
  return Model::FromJson(ToJson(), StrCat("<GraphBuilder ", name_, ">"), options);
}

}  // namespace npuplan::api
