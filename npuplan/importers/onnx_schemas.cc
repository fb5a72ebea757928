#include "npuplan/importers/onnx_schemas.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "npuplan/importers/onnx_inference_util.h"
#include "npuplan/support/str_util.h"

namespace npuplan::onnx_import {
namespace {

class Registry final : public onnx::ISchemaRegistry {
 public:
  Registry() {
    std::vector<onnx::OpSchema> schemas;
    AddNewOpsetSchemas(schemas);
    AddMicrosoftSchemas(schemas);
    for (onnx::OpSchema& s : schemas) {
      s.Finalize();
      std::string domain = s.domain(), name = s.Name();
      const int since = s.SinceVersion();
      mine_[{domain, name}].emplace(since, std::move(s));
    }
  }

  const onnx::OpSchema* GetSchema(const std::string& key, const int version,
                                  const std::string& domain) const override {
    const std::string d = domain == "ai.onnx" ? "" : domain;
    const onnx::OpSchema* theirs = onnx::OpSchemaRegistry::Schema(key, version, d);
    auto it = mine_.find({d, key});
    if (it == mine_.end()) return theirs;
    auto v = it->second.upper_bound(version);  // first since > version
    if (v == it->second.begin()) return theirs;
    const onnx::OpSchema* ours = &std::prev(v)->second;
    return theirs == nullptr || ours->SinceVersion() >= theirs->SinceVersion() ? ours : theirs;
  }

  const std::map<std::pair<std::string, std::string>, std::map<int, onnx::OpSchema>>& mine() const { return mine_; }

 private:
  std::map<std::pair<std::string, std::string>, std::map<int, onnx::OpSchema>> mine_;
};

const Registry& TheRegistry() {
  static const Registry* r = new Registry();  // never destroyed: used until exit
  return *r;
}

}  // namespace

const onnx::ISchemaRegistry* Schemas() { return &TheRegistry(); }

std::vector<OpSchemaVersion> KnownSchemaVersions() {
  std::vector<OpSchemaVersion> out;
  for (const onnx::OpSchema& s : onnx::OpSchemaRegistry::get_all_schemas_with_history()) {
    const std::string& d = s.domain();
    if (d != "" && d != "ai.onnx.ml" && d != kMicrosoftDomain) continue;
    out.push_back({d, s.Name(), s.SinceVersion(), false, s.Deprecated()});
  }
  for (const auto& [key, versions] : TheRegistry().mine()) {
    for (const auto& [since, s] : versions) out.push_back({key.first, key.second, since, true, false});
  }
  std::sort(out.begin(), out.end(), [](const OpSchemaVersion& a, const OpSchemaVersion& b) {
    return std::tie(a.domain, a.op, a.since, a.npuplan) < std::tie(b.domain, b.op, b.since, b.npuplan);
  });
  // A version both define is npuplan's (the registry prefers it): keep that one.
  std::vector<OpSchemaVersion> unique;
  for (OpSchemaVersion& v : out) {
    if (!unique.empty() && unique.back().domain == v.domain && unique.back().op == v.op &&
        unique.back().since == v.since) {
      unique.back() = std::move(v);
    } else {
      unique.push_back(std::move(v));
    }
  }
  return unique;
}

std::string OpTableMarkdown(int min_opset, int max_opset) {
  // Per op: the versions in effect in [min_opset, max_opset], as ranges
  // "since–until" with the source of the schema.
  std::map<std::pair<std::string, std::string>, std::vector<OpSchemaVersion>> by_op;
  for (const OpSchemaVersion& v : KnownSchemaVersions()) by_op[{v.domain, v.op}].push_back(v);
  std::string md =
      "| domain | op | opsets | schema | status |\n|---|---|---|---|---|\n";
  for (const auto& [key, versions] : by_op) {
    const auto& [domain, op] = key;
    const bool default_domain = domain.empty();
    for (size_t i = 0; i < versions.size(); ++i) {
      const OpSchemaVersion& v = versions[i];
      int from = v.since, to = i + 1 < versions.size() ? versions[i + 1].since - 1 : (default_domain ? max_opset : 0);
      std::string range;
      if (default_domain) {
        from = std::max(from, min_opset);
        to = std::min(to, max_opset);
        if (from > to) continue;
        range = from == to ? StrCat(from) : StrCat(from, "–", to);
      } else {
        range = StrCat(v.since, i + 1 < versions.size() ? StrCat("–", versions[i + 1].since - 1) : "+");
      }
      const char* status = v.deprecated ? "deprecated (no shape inference)"
                           : v.npuplan  ? "supported (npuplan inference)"
                                        : "supported (libonnx inference)";
      md += StrCat("| ", default_domain ? "ai.onnx" : domain, " | ", op, " | ", range, " | ",
                   v.npuplan ? "npuplan" : "libonnx", " ", op, "-", v.since, " | ", status, " |\n");
    }
  }
  return md;
}

}  // namespace npuplan::onnx_import
