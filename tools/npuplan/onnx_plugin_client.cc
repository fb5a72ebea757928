#include "tools/npuplan/onnx_plugin_client.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "npuplan/importers/onnx_source.h"
#include "npuplan/ir/engine_table.h"
#include "npuplan/support/echo.h"
#include "npuplan/support/status_macros.h"
#include "npuplan/support/str_util.h"
#include "tools/npuplan/onnx_plugin/onnx_plugin_abi.h"
#include "tools/npuplan/onnx_plugin/onnx_plugin_wire.h"

namespace npuplan {
namespace {

struct Plugin {
  npuplan_onnx_plugin_import_fn import = nullptr;
  npuplan_onnx_plugin_op_table_fn op_table = nullptr;
  npuplan_onnx_plugin_free_fn free = nullptr;
};

std::string PluginPath() {
  if (const char* env = std::getenv("NPUPLAN_ONNX_PLUGIN"); env != nullptr && *env != '\0')
    return env;
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return NPUPLAN_ONNX_PLUGIN_RELPATH;
  return (exe.parent_path() / NPUPLAN_ONNX_PLUGIN_RELPATH).lexically_normal().string();
}

absl::Status Unloadable(const std::string& path, std::string_view why) {
  return absl::FailedPreconditionError(
      StrCat("cannot read ONNX models: the ONNX plugin '", EchoName(path), "' ", why,
             " (it is built and installed with the CLI; NPUPLAN_ONNX_PLUGIN names another path)"));
}

absl::StatusOr<Plugin> Load() {
  const std::string path = PluginPath();
  // Never closed: the process keeps it, as it would keep a linked library.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* err = dlerror();
    return Unloadable(path, StrCat("cannot be loaded: ", err != nullptr ? err : "unknown error"));
  }
  auto version = reinterpret_cast<npuplan_onnx_plugin_version_fn>(
      dlsym(handle, "npuplan_onnx_plugin_version"));
  Plugin p;
  p.import =
      reinterpret_cast<npuplan_onnx_plugin_import_fn>(dlsym(handle, "npuplan_onnx_plugin_import"));
  p.op_table = reinterpret_cast<npuplan_onnx_plugin_op_table_fn>(
      dlsym(handle, "npuplan_onnx_plugin_op_table"));
  p.free = reinterpret_cast<npuplan_onnx_plugin_free_fn>(dlsym(handle, "npuplan_onnx_plugin_free"));
  if (version == nullptr || p.import == nullptr || p.op_table == nullptr || p.free == nullptr) {
    return Unloadable(path, "is not an npuplan ONNX plugin (its functions are missing)");
  }
  const std::string want = NPUPLAN_VERSION "/" NPUPLAN_ONNX_PLUGIN_ABI;
  if (want != version()) {
    return Unloadable(path, StrCat("is version ", version(), ", this CLI needs ", want));
  }
  return p;
}

absl::StatusOr<Plugin> GetPlugin() {
  static const absl::StatusOr<Plugin>* plugin = new absl::StatusOr<Plugin>(Load());
  return *plugin;
}

}  // namespace

absl::StatusOr<OnnxImport> ImportOnnxSource(const OnnxSourceRequest& request) {
  NPUPLAN_ASSIGN_OR_RETURN(Plugin p, GetPlugin());
  // The engine table first, as the in-process import does, for its errors.
  NPUPLAN_ASSIGN_OR_RETURN(EngineTable engines,
                           EngineTable::DefaultMergedWith(request.engines_file));
  const std::string req = onnx_plugin::EncodeRequest(request);
  const std::string_view bytes = request.bytes.value_or(std::string_view());
  char* response = nullptr;
  size_t size = 0;
  const int rc = p.import(req.data(), req.size(), bytes.data(), bytes.size(),
                          request.bytes.has_value() ? 1 : 0, &response, &size);
  if (rc != 0 || response == nullptr)
    return absl::ResourceExhaustedError("ONNX plugin: out of memory");
  auto imported =
      onnx_plugin::DecodeResponse(std::string_view(response, size), request.path, engines);
  p.free(response);
  return imported;
}

namespace cli {

absl::StatusOr<std::string> OnnxOpTableMarkdown(int min_opset, int max_opset) {
  NPUPLAN_ASSIGN_OR_RETURN(Plugin p, GetPlugin());
  char* response = nullptr;
  size_t size = 0;
  if (p.op_table(min_opset, max_opset, &response, &size) != 0 || response == nullptr) {
    return absl::ResourceExhaustedError("ONNX plugin: out of memory");
  }
  std::string table(response, size);
  p.free(response);
  return table;
}

}  // namespace cli
}  // namespace npuplan
