#include "npuplan/importers/onnx_model_checks.h"

#include <sys/stat.h>

#include <exception>
#include <filesystem>
#include <unordered_map>

#include "npuplan/importers/import_error.h"
#include "npuplan/importers/onnx_schemas.h"
#include "npuplan/importers/onnx_tensor_data.h"
#include "npuplan/support/status_macros.h"
#include "npuplan/support/str_util.h"
#include "onnx/defs/schema.h"

namespace npuplan::onnx_import {
namespace {

namespace fs = std::filesystem;

std::optional<int64_t> ParseNonNegative(const std::string& s) {
  if (s.empty() || s.size() > 18 || s.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  return std::stoll(s);
}

class TensorChecker {
 public:
  TensorChecker(const std::string& model_dir, std::string_view src) : src_(src) {
    std::error_code ec;
    fs::path dir = model_dir.empty() ? fs::path(".") : fs::path(model_dir);
    dir_ = fs::weakly_canonical(fs::absolute(dir, ec), ec);
  }

  absl::Status Graph(const onnx::GraphProto& g) {
    for (const auto& t : g.initializer()) NPUPLAN_RETURN_IF_ERROR(Tensor(t, StrCat("initializer '", t.name(), "'")));
    for (const auto& sp : g.sparse_initializer()) {
      for (int64_t d : sp.dims()) {
        if (d < 0) return Bad(src_, StrCat("sparse initializer '", sp.values().name(), "': negative dim ", d));
      }
      std::vector<int64_t> dims(sp.dims().begin(), sp.dims().end());
      if (!DimsProduct(dims)) {
        return Bad(src_, StrCat("sparse initializer '", sp.values().name(), "': the element count of shape [",
                                StrJoin(dims, ", "), "] overflows int64"));
      }
    }
    for (int i = 0; i < g.node_size(); ++i) {
      const onnx::NodeProto& n = g.node(i);
      for (const auto& a : n.attribute()) {
        const std::string what = StrCat("attribute '", a.name(), "' of node ", NodeLabel(n, i));
        if (a.has_t()) NPUPLAN_RETURN_IF_ERROR(Tensor(a.t(), what));
        for (const auto& t : a.tensors()) NPUPLAN_RETURN_IF_ERROR(Tensor(t, what));
        if (a.has_g()) NPUPLAN_RETURN_IF_ERROR(Graph(a.g()));
        for (const auto& sub : a.graphs()) NPUPLAN_RETURN_IF_ERROR(Graph(sub));
      }
    }
    return absl::OkStatus();
  }

  int64_t external() const { return external_; }

 private:
  absl::Status Tensor(const onnx::TensorProto& t, const std::string& what) {
    std::vector<int64_t> dims(t.dims().begin(), t.dims().end());
    for (int64_t d : dims) {
      if (d < 0) return Bad(src_, StrCat(what, ": negative dim ", d));
    }
    auto count = DimsProduct(dims);
    const int bits = ElementBits(t.data_type());
    std::optional<int64_t> bytes;
    if (count) bytes = CheckedMul(*count, bits == 0 ? 1 : bits / 8 + (bits % 8 != 0));
    if (!count || !bytes) {
      return Bad(src_, StrCat(what, ": the size of shape [", StrJoin(dims, ", "), "] overflows int64"));
    }
    if (bits == 4) bytes = *count / 2 + *count % 2;
    if (t.data_location() == onnx::TensorProto::EXTERNAL) return External(t, what, bits == 0 ? -1 : *bytes);
    if (t.has_raw_data()) {
      if (bits == 0) return absl::OkStatus();  // strings have no raw form; libonnx ignores it
      const int64_t have = static_cast<int64_t>(t.raw_data().size());
      if (have != *bytes) {
        return Bad(src_, StrCat(what, ": raw_data holds ", have, " bytes, but its dims [", StrJoin(dims, ", "),
                                "] and element type need ", *bytes));
      }
      return absl::OkStatus();
    }
    const int64_t stored = StoredElements(t);
    const bool packed_ok = bits == 4 && stored == 2 * ((*count + 1) / 2);
    if (stored != *count && !packed_ok) {
      return Bad(src_, StrCat(what, ": it holds ", stored, " value", stored == 1 ? "" : "s", " but its dims [",
                              StrJoin(dims, ", "), "] need ", *count));
    }
    return absl::OkStatus();
  }

  // `need`: bytes the dims and type need (-1: unknown, e.g. strings).
  absl::Status External(const onnx::TensorProto& t, const std::string& what, int64_t need) {
    ++external_;
    std::string location;
    std::optional<int64_t> offset = 0, length;
    for (const auto& kv : t.external_data()) {
      if (kv.key() == "location") location = kv.value();
      if (kv.key() == "offset" && !(offset = ParseNonNegative(kv.value()))) {
        return Bad(src_, StrCat(what, ": external data offset '", kv.value(), "' is not a non-negative integer"));
      }
      if (kv.key() == "length" && !(length = ParseNonNegative(kv.value()))) {
        return Bad(src_, StrCat(what, ": external data length '", kv.value(), "' is not a non-negative integer"));
      }
    }
    if (location.empty()) return Bad(src_, StrCat(what, ": external data without a location"));
    fs::path rel(location);
    bool escapes = rel.is_absolute() || location.find('\0') != std::string::npos;
    for (const auto& part : rel) escapes = escapes || part == "..";
    std::error_code ec;
    fs::path full = fs::weakly_canonical(dir_ / rel, ec);
    if (!escapes && !ec) {  // a symlink may still lead out
      auto [d, f] = std::mismatch(dir_.begin(), dir_.end(), full.begin(), full.end());
      escapes = d != dir_.end();
    }
    if (escapes || ec) {
      return Bad(src_, StrCat(what, ": external data location '", location,
                              "' is outside the model's directory (only files inside it are read)"));
    }
    if (length && need >= 0 && *length != need) {
      return Bad(src_, StrCat(what, ": external data length ", *length, " does not match the ", need,
                              " bytes its dims and element type need"));
    }
    int64_t size;
    if (auto it = sizes_.find(full.string()); it != sizes_.end()) {
      size = it->second;
    } else {
      struct stat st;
      if (::stat(full.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
        return Bad(src_, StrCat(what, ": external data file '", location, "' does not exist in the model's directory ",
                                dir_.string(), " (or is not a regular file)"));
      }
      size = static_cast<int64_t>(st.st_size);
      sizes_[full.string()] = size;
    }
    const int64_t want = length ? *length : (need >= 0 ? need : 0);
    auto end = CheckedAdd(*offset, want);
    if (!end || *end > size) {
      return Bad(src_, StrCat(what, ": external data file '", location, "' has ", size, " bytes but the tensor needs ",
                              want, " from offset ", *offset));
    }
    return absl::OkStatus();
  }

  std::string src_;
  fs::path dir_;
  std::unordered_map<std::string, int64_t> sizes_;
  int64_t external_ = 0;
};

// Attribute values an inference function uses as an index without a range
// check (found by onnx_schema_sweep_test): "" when fine, else the rule broken.
std::string CheckAttributeValues(const onnx::NodeProto& n) {
  for (const auto& a : n.attribute()) {
    if (n.op_type() == "GatherND" && a.name() == "batch_dims" && a.i() < 0) {
      return StrCat("batch_dims is ", a.i(), "; it must not be negative");
    }
    // Sizes vectors by it (8 TB for 2^40).
    if (n.op_type() == "Scan" && a.name() == "num_scan_inputs" && (a.i() < 1 || a.i() > n.input_size())) {
      return StrCat("num_scan_inputs is ", a.i(), "; it must be between 1 and the number of inputs (",
                    n.input_size(), ")");
    }
  }
  return "";
}


struct UnknownOp {
  std::vector<std::string> nodes;  // labels, file order
};

// ONNX's inference functions assume a node that satisfies its schema — they
// read required attributes without a null check (Scan's num_scan_inputs
// crashed libonnx 1.12; found by fuzz/onnx_fuzz). So every node of every
// graph is checked with its schema's own Verify (what onnx::checker and
// onnxruntime run on each node) before inference: a violation is bad input.
absl::Status CheckGraphNodes(const onnx::GraphProto& g, std::string_view gname, const NodeCheckContext& ctx,
                             std::map<std::string, UnknownOp>& unknown) {
  for (int i = 0; i < g.node_size(); ++i) {
    const onnx::NodeProto& n = g.node(i);
    if (n.op_type().empty()) {
      return Bad(ctx.src, StrCat("graph '", gname, "': node ", NodeLabel(n, i), " has an empty op type"));
    }
    const std::string domain = n.domain() == "ai.onnx" ? "" : n.domain();
    auto version = ctx.opsets.find(domain);
    const onnx::OpSchema* schema =
        version == ctx.opsets.end() ? nullptr : Schemas()->GetSchema(n.op_type(), version->second, domain);
    if (schema) {
      std::string why;
      try {
        schema->Verify(n);
        why = CheckAttributeValues(n);
      } catch (const std::exception& e) {
        why = e.what();
        if (size_t c = why.find("\n\n==> Context"); c != std::string::npos) why.resize(c);
      }
      if (!why.empty()) {
        return Bad(ctx.src, StrCat("graph '", gname, "': node ", NodeLabel(n, i),
                                   " does not satisfy its ONNX schema (", n.op_type(), "-", schema->SinceVersion(),
                                   "): ", why));
      }
    } else if (!ctx.local_functions.count({n.domain(), n.op_type()})) {
      std::string op = domain.empty() ? n.op_type() : StrCat(domain, ".", n.op_type());
      if (version == ctx.opsets.end()) op = StrCat(op, " (domain '", domain, "' is not imported by the model)");
      unknown[op].nodes.push_back(StrCat("graph '", gname, "' node ", NodeLabel(n, i)));
    }
    for (const auto& a : n.attribute()) {
      if (a.has_g()) NPUPLAN_RETURN_IF_ERROR(CheckGraphNodes(a.g(), StrCat(n.name(), "/", a.name()), ctx, unknown));
      for (const auto& sub : a.graphs()) {
        NPUPLAN_RETURN_IF_ERROR(CheckGraphNodes(sub, StrCat(n.name(), "/", a.name()), ctx, unknown));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

std::string NodeLabel(const onnx::NodeProto& n, int index) {
  if (!n.name().empty()) return StrCat("'", n.name(), "' (", n.op_type(), ")");
  return StrCat("#", index, " (", n.op_type(), (n.output_size() ? StrCat(" -> ", n.output(0)) : ""), ")");
}

absl::Status CheckTensors(const onnx::GraphProto& root, const std::string& model_dir, std::string_view src,
                          int64_t& external_tensors) {
  TensorChecker checker(model_dir, src);
  NPUPLAN_RETURN_IF_ERROR(checker.Graph(root));
  external_tensors = checker.external();
  return absl::OkStatus();
}

absl::Status CheckNodes(const onnx::GraphProto& root, std::string_view root_name, const NodeCheckContext& ctx,
                        std::vector<std::string>& warnings) {
  std::map<std::string, UnknownOp> unknown;
  NPUPLAN_RETURN_IF_ERROR(CheckGraphNodes(root, root_name, ctx, unknown));
  if (unknown.empty()) return absl::OkStatus();
  std::vector<std::string> items;
  for (const auto& [op, u] : unknown) {
    std::vector<std::string> nodes = u.nodes;
    const size_t total = nodes.size();
    if (nodes.size() > 3) {
      nodes.resize(3);
      nodes.push_back(StrCat("and ", total - 3, " more"));
    }
    items.push_back(StrCat(op, " (", total, " node", total == 1 ? "" : "s", ": ", StrJoin(nodes, ", "), ")"));
  }
  const std::string list = StrJoin(items, "; ");
  if (ctx.allow_unknown_ops) {
    warnings.push_back(StrCat(unknown.size(), " op type(s) have no ONNX schema npuplan knows; imported as opaque ops "
                              "with unknown output shapes: ", list));
    return absl::OkStatus();
  }
  return Bad(ctx.src, StrCat("the model uses ", unknown.size(), " op type", unknown.size() == 1 ? "" : "s",
                             " npuplan does not know (no ONNX schema at the model's opset): ", list,
                             " (docs/onnx.md lists the supported ops; --allow-unknown-ops imports them as opaque ops)"));
}

}  // namespace npuplan::onnx_import
