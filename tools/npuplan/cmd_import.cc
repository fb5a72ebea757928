// `npuplan import MODEL.onnx -o GRAPH.json`: ONNX → npuplan.graph/1 (SPEC G3).
// Also registers the ONNX loader hook, so every command that loads a model
// (compile, verify, …) accepts an .onnx file directly.
#include <chrono>
#include <cstdio>
#include <memory>

#include "npuplan/importers/onnx_importer.h"
#include "npuplan/ir/graph_json.h"
#include "npuplan/support/file_util.h"
#include "npuplan/support/status_macros.h"
#include "npuplan/support/str_util.h"
#include "tools/npuplan/command.h"
#include "tools/npuplan/model_loader.h"

namespace npuplan::cli {
namespace {

void PrintWarnings(const OnnxImport& imported) {
  for (const std::string& w : imported.warnings) std::fprintf(stderr, "warning: %s\n", w.c_str());
}

// The loader hook used by LoadModel for *.onnx paths.
absl::StatusOr<Model> LoadOnnx(const std::string& path, const EngineTable& engines,
                               const std::vector<std::string>& input_shapes) {
  OnnxImportOptions opts;
  opts.engines = &engines;
  opts.input_shapes = input_shapes;
  NPUPLAN_ASSIGN_OR_RETURN(OnnxImport imported, ImportOnnxFile(path, opts));
  PrintWarnings(imported);
  return std::move(imported.model);
}

const bool kOnnxLoaderRegistered = SetOnnxLoader(&LoadOnnx);

struct ImportFlags {
  std::string input;
  std::string output;
  LoadOptions load;
  bool no_fold = false;
  bool quiet = false;
};

int RunImport(const ImportFlags& f) {
  auto table = LoadEngineTable(f.load.engines_file);
  if (!table.ok()) return ReportStatus(table.status());
  OnnxImportOptions opts;
  opts.engines = &*table;
  opts.input_shapes = f.load.input_shapes;
  opts.fold_shapes = !f.no_fold;
  auto start = std::chrono::steady_clock::now();
  auto imported = ImportOnnxFile(f.input, opts);
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (!imported.ok()) return ReportStatus(imported.status());
  PrintWarnings(*imported);
  Model& model = imported->model;
  if (!f.load.engines_file.empty()) {  // keep the file's engines with the graph
    auto text = ReadFile(f.load.engines_file);
    auto extra = text.ok() ? EngineTable::Parse(*text, f.load.engines_file) : text.status();
    if (!extra.ok()) return ReportStatus(extra.status());
    for (const auto& [id, conf] : extra->engines()) model.engine_overrides[id] = conf;
  }
  if (auto s = WriteFileAtomically(f.output, WriteGraphJson(model)); !s.ok()) return ReportStatus(s);
  if (!f.quiet) {
    const OnnxImportStats& st = imported->stats;
    std::printf("imported %s (IR %lld, opset %lld): %lld ONNX nodes -> %lld nodes in %lld graphs, "
                "%lld captures, %lld dynamic nodes, %lld unknown-shape tensors (ONNX inference alone: %lld, "
                "%lld dims folded) in %.0f ms -> %s\n",
                f.input.c_str(), static_cast<long long>(st.ir_version), static_cast<long long>(st.opset),
                static_cast<long long>(st.onnx_nodes), static_cast<long long>(st.nodes),
                static_cast<long long>(st.subgraphs + 1), static_cast<long long>(st.captures),
                static_cast<long long>(st.dynamic_nodes), static_cast<long long>(st.unknown_tensors),
                static_cast<long long>(st.unknown_tensors_onnx), static_cast<long long>(st.folded_dims), ms,
                f.output.c_str());
  }
  return kExitOk;
}

void SetupImport(CLI::App& app, Invocation& inv) {
  auto flags = std::make_shared<ImportFlags>();
  CLI::App* cmd = app.add_subcommand("import", "Import an ONNX model into an npuplan.graph/1 JSON graph");
  cmd->add_option("model", flags->input, "Input .onnx file")->required();
  cmd->add_option("-o,--output", flags->output, "Output graph file (npuplan.graph/1)")->required();
  cmd->add_option("--input-shape", flags->load.input_shapes,
                  "Pin an input's shape NAME=1x3x48x320 (repeatable; symbolic dims are -1 otherwise)");
  cmd->add_option("--engines", flags->load.engines_file, "Engine table file merged over the built-in table");
  cmd->add_flag("--no-fold", flags->no_fold, "Skip npuplan's shape-arithmetic folding (ONNX inference only)");
  cmd->add_flag("-q,--quiet", flags->quiet, "Do not print the summary line");
  cmd->callback([flags, &inv] { inv.exit_code = RunImport(*flags); });
}

NPUPLAN_REGISTER_COMMAND("import", SetupImport);

}  // namespace
}  // namespace npuplan::cli
