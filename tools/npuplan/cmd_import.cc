// `npuplan import MODEL.onnx -o GRAPH.json`: ONNX → npuplan.graph/1 (SPEC G3).
// (Every command that loads a model also accepts an .onnx file directly:
// model_loader.h.)
#include <chrono>
#include <cstdio>
#include <memory>

#include "npuplan/importers/onnx_source.h"
#include "npuplan/ir/graph_json.h"
#include "npuplan/ir/verifier.h"
#include "npuplan/support/echo.h"
#include "npuplan/support/file_util.h"
#include "npuplan/support/status_macros.h"
#include "npuplan/support/str_util.h"
#include "tools/npuplan/command.h"
#include "tools/npuplan/flag_checks.h"
#include "tools/npuplan/model_loader.h"
#include "tools/npuplan/onnx_plugin_client.h"

namespace npuplan::cli {
namespace {

void PrintWarnings(const OnnxImport& imported) {
  for (const std::string& w : imported.warnings)
    std::fprintf(stderr, "warning: %s\n", EchoMessage(w).c_str());
}

struct ImportFlags {
  std::string input;
  std::string output;
  LoadOptions load;
  bool no_fold = false;
  bool quiet = false;
  bool list_ops = false;
};

int RunImport(const ImportFlags& f) {
  if (f.list_ops) {  // the op table of docs/onnx.md
    auto table =
        OnnxOpTableMarkdown(static_cast<int>(kMinOnnxOpset), static_cast<int>(kMaxOnnxOpset));
    if (!table.ok()) return ReportStatus(table.status());
    std::fputs(table->c_str(), stdout);
    return kExitOk;
  }
  if (f.input.empty() || f.output.empty())
    return ReportUsage("import: a model and -o/--output are required");
  auto table = LoadEngineTable(f.load.engines_file);
  if (!table.ok()) return ReportStatus(table.status());
  OutputTransaction out;
  if (auto s = out.Add(f.output, "-o"); !s.ok()) return ReportStatus(s);
  OnnxSourceRequest request = api::internal::OnnxRequest(f.input, f.load);
  request.fold_shapes = !f.no_fold;
  auto start = std::chrono::steady_clock::now();
  auto imported = ImportOnnxSource(request);
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
  // What import writes, verify accepts: the graph is read back with the
  // graph reader and checked by the verifier before it is written.
  std::string json = WriteGraphJson(model);
  if (auto back = ParseGraphJson(json, f.output); !back.ok()) {
    return ReportStatus(absl::InternalError(StrCat(f.input, ": the imported graph does not read back: ",
                                                   std::string(back.status().message()))));
  } else if (auto v = VerifyStructure(*back); !v.ok()) {
    return ReportStatus(absl::InternalError(StrCat(f.input, ": the imported graph fails verification: ",
                                                   std::string(v.message()))));
  }
  if (auto s = out.Write(f.output, json); !s.ok()) return ReportStatus(s);
  if (auto s = out.Commit(); !s.ok()) return ReportStatus(s);
  if (!f.quiet) {
    const OnnxImportStats& st = imported->stats;
    std::fprintf(out.writes_stdout() ? stderr : stdout,
                 "imported %s (IR %lld, opset %lld): %lld ONNX nodes -> %lld nodes in %lld graphs, "
                 "%lld captures, %lld dynamic nodes, %lld unknown-shape tensors (ONNX inference "
                 "alone: %lld, "
                 "%lld dims folded) in %.0f ms -> %s\n",
                 EchoName(f.input).c_str(), static_cast<long long>(st.ir_version),
                 static_cast<long long>(st.opset), static_cast<long long>(st.onnx_nodes),
                 static_cast<long long>(st.nodes), static_cast<long long>(st.subgraphs + 1),
                 static_cast<long long>(st.captures), static_cast<long long>(st.dynamic_nodes),
                 static_cast<long long>(st.unknown_tensors),
                 static_cast<long long>(st.unknown_tensors_onnx),
                 static_cast<long long>(st.folded_dims), ms, EchoName(f.output).c_str());
  }
  return kExitOk;
}

void SetupImport(CLI::App& app, Invocation& inv) {
  auto flags = std::make_shared<ImportFlags>();
  CLI::App* cmd = app.add_subcommand("import", "Import an ONNX model into an npuplan.graph/1 JSON graph");
  cmd->add_option("model", flags->input, "Input .onnx file");
  cmd->add_option("-o,--output", flags->output,
                  "Output graph file (npuplan.graph/1; - for standard output)");
  AddInputShapeFlag(cmd, &flags->load);
  cmd->add_flag("--list-ops", flags->list_ops,
                "Print the op x opset x status table of the ONNX ops the importer knows (docs/onnx.md) and exit");
  cmd->add_option("--engines", flags->load.engines_file, "Engine table file merged over the built-in table");
  cmd->add_flag("--no-fold", flags->no_fold, "Skip npuplan's shape-arithmetic folding (ONNX inference only)");
  cmd->add_flag("-q,--quiet", flags->quiet, "Do not print the summary line");
  AddMaxFileBytesFlag(cmd);
  cmd->callback([flags, &inv] { inv.exit_code = RunImport(*flags); });
}

NPUPLAN_REGISTER_COMMAND("import", SetupImport);

}  // namespace
}  // namespace npuplan::cli
