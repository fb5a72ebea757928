#include "npuplan/compiler/pass_registry.h"

#include <algorithm>
#include <type_traits>

#include "npuplan/compiler/all_passes.h"
#include "npuplan/support/status_macros.h"
#include "npuplan/support/str_util.h"

namespace npuplan {
namespace {

template <typename T>
std::unique_ptr<Pass> MakePass(const CompileOptions* options) {
  if constexpr (std::is_constructible_v<T, const CompileOptions&>) {
    if (options != nullptr) return std::make_unique<T>(*options);
  }
  return std::make_unique<T>();
}

constexpr std::string_view kStreamDriver = LogicalStreamAssignment::kName;
// Nested lists deeper than this are rejected (the parser recurses).
constexpr int kMaxNesting = 8;

const PassRegistryEntry* Find(std::string_view name) {
  for (const PassRegistryEntry& e : PassRegistry()) {
    if (e.name == name) return &e;
  }
  return nullptr;
}

bool IsNestedPipeline(std::string_view name) {
  if (name.empty()) return false;
  for (const PassRegistryEntry& e : PassRegistry()) {
    if (!e.stream_sub_pass && e.pipeline == name) return true;
  }
  return false;
}

// The registry's passes of nested pipeline `name`, in order.
std::unique_ptr<PassPipeline> NestedPipeline(std::string_view name, const CompileOptions* options) {
  auto p = std::make_unique<PassPipeline>(std::string(name));
  for (const PassRegistryEntry& e : PassRegistry()) {
    if (!e.stream_sub_pass && e.pipeline == name) p->AddPass(e.make(options));
  }
  return p;
}

// --passes text as a tree: `name` or `name(children)`.
struct PassSpec {
  std::string name;
  bool has_list = false;
  std::vector<PassSpec> children;
};

std::string_view Trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

// list := [item] (',' [item])* ; item := name ['(' list ')']. Stops at ')'
// or the end; empty items are skipped.
absl::Status ParseList(std::string_view text, size_t& pos, int depth, std::vector<PassSpec>& out) {
  if (depth > kMaxNesting) {
    return absl::InvalidArgumentError(
        StrCat("--passes: pass lists nested deeper than ", kMaxNesting));
  }
  while (pos <= text.size()) {
    const size_t end = text.find_first_of(",()", pos);
    const std::string_view name =
        Trim(text.substr(pos, end == std::string_view::npos ? text.npos : end - pos));
    pos = end == std::string_view::npos ? text.size() : end;
    PassSpec spec;
    spec.name = std::string(name);
    if (pos < text.size() && text[pos] == '(') {
      if (name.empty())
        return absl::InvalidArgumentError("--passes: a '(' without a pass name before it");
      spec.has_list = true;
      ++pos;
      NPUPLAN_RETURN_IF_ERROR(ParseList(text, pos, depth + 1, spec.children));
      if (pos >= text.size() || text[pos] != ')') {
        return absl::InvalidArgumentError(StrCat("--passes: '", name, "(' is not closed"));
      }
      ++pos;
      if (pos < text.size() && text[pos] != ',' && text[pos] != ')') {
        return absl::InvalidArgumentError(StrCat("--passes: expected ',' after '", name, "(...)'"));
      }
    }
    if (!spec.name.empty()) out.push_back(std::move(spec));
    if (pos >= text.size() || text[pos] == ')') return absl::OkStatus();
    ++pos;  // ','
  }
  return absl::OkStatus();
}

absl::Status UnknownPass(std::string_view name) {
  return absl::InvalidArgumentError(StrCat(
      "--passes: unknown pass '", name, "' (known: ", StrJoin(RegisteredPassNames(), ", "), ")"));
}

absl::StatusOr<std::unique_ptr<Pass>> BuildPass(const PassSpec& spec,
                                                const CompileOptions& options);

// logical-stream-assignment(a,b): a chain of registered sub-passes.
absl::StatusOr<std::unique_ptr<Pass>> BuildStreamDriver(const PassSpec& spec) {
  std::vector<std::unique_ptr<stream::LogicalStreamChainPass>> chain;
  for (const PassSpec& c : spec.children) {
    std::unique_ptr<stream::LogicalStreamChainPass> pass = stream::MakeChainPass(c.name);
    if (pass == nullptr || c.has_list) {
      return absl::InvalidArgumentError(StrCat("--passes: '", c.name, c.has_list ? "(...)" : "",
                                               "' inside ", kStreamDriver,
                                               "(...) is not a logical-stream sub-pass (they are: ",
                                               StrJoin(stream::ChainPassNames(), ", "), ")"));
    }
    chain.push_back(std::move(pass));
  }
  return std::unique_ptr<Pass>(std::make_unique<LogicalStreamAssignment>(std::move(chain)));
}

absl::StatusOr<std::unique_ptr<Pass>> BuildPass(const PassSpec& spec,
                                                const CompileOptions& options) {
  if (spec.name == kStreamDriver && spec.has_list) return BuildStreamDriver(spec);
  if (IsNestedPipeline(spec.name) && Find(spec.name) == nullptr) {
    if (!spec.has_list) return std::unique_ptr<Pass>(NestedPipeline(spec.name, &options));
    auto p = std::make_unique<PassPipeline>(spec.name);
    for (const PassSpec& c : spec.children) {
      NPUPLAN_ASSIGN_OR_RETURN(std::unique_ptr<Pass> pass, BuildPass(c, options));
      p->AddPass(std::move(pass));
    }
    return std::unique_ptr<Pass>(std::move(p));
  }
  const PassRegistryEntry* e = Find(spec.name);
  if (e == nullptr) return UnknownPass(spec.name);
  if (e->stream_sub_pass) {
    return absl::InvalidArgumentError(StrCat(
        "--passes: '", spec.name, "' is a logical-stream sub-pass: it runs on each graph inside ",
        kStreamDriver, "; name it as ", kStreamDriver, "(...,", spec.name, ",...)"));
  }
  if (spec.has_list)
    return absl::InvalidArgumentError(
        StrCat("--passes: pass '", spec.name, "' takes no pass list"));
  return e->make(&options);
}

}  // namespace

const std::vector<PassRegistryEntry>& PassRegistry() {
  static const std::vector<PassRegistryEntry> entries = {
#define NPUPLAN_PASS(pipeline, name, cls) {name, #cls, pipeline, false, &MakePass<cls>},
#define NPUPLAN_STREAM_PASS(name, cls, chains)       \
  {name, #cls, LogicalStreamAssignment::kName, true, \
   [](const CompileOptions*) -> std::unique_ptr<Pass> { return stream::MakeChainPass(name); }},
#include "npuplan/compiler/passes.def"
  };
  return entries;
}

std::vector<std::string> RegisteredPassNames() {
  std::vector<std::string> names;
  for (const PassRegistryEntry& e : PassRegistry()) names.emplace_back(e.name);
  std::sort(names.begin(), names.end());
  return names;
}

absl::StatusOr<std::unique_ptr<PassPipeline>> BuildDefaultPipeline(const CompileOptions& options) {
  auto pipeline = std::make_unique<PassPipeline>("compile");
  std::string_view group;  // the nested pipeline just added
  for (const PassRegistryEntry& e : PassRegistry()) {
    if (e.stream_sub_pass) continue;  // logical-stream-assignment builds its chain
    if (e.pipeline.empty()) {
      pipeline->AddPass(e.make(&options));
    } else if (e.pipeline != group) {
      pipeline->AddPass(NestedPipeline(e.pipeline, &options));
    }
    group = e.pipeline;
  }
  return pipeline;
}

absl::StatusOr<std::unique_ptr<PassPipeline>> BuildPipelineFromNames(
    const std::string& names, const CompileOptions& options) {
  std::vector<PassSpec> specs;
  size_t pos = 0;
  NPUPLAN_RETURN_IF_ERROR(ParseList(names, pos, 0, specs));
  if (pos < names.size()) return absl::InvalidArgumentError("--passes: a ')' without its '('");
  auto pipeline = std::make_unique<PassPipeline>("custom");
  for (const PassSpec& spec : specs) {
    NPUPLAN_ASSIGN_OR_RETURN(std::unique_ptr<Pass> pass, BuildPass(spec, options));
    pipeline->AddPass(std::move(pass));
  }
  return pipeline;
}

}  // namespace npuplan
