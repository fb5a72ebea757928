// libnpuplan_onnx.so: the CLI's ONNX importer, loaded on demand
// (onnx_plugin_abi.h). Built with hidden visibility: only these four
// functions are exported.
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>

#include "npuplan/importers/onnx_schemas.h"
#include "npuplan/importers/onnx_source.h"
#include "tools/npuplan/onnx_plugin/onnx_plugin_abi.h"
#include "tools/npuplan/onnx_plugin/onnx_plugin_wire.h"

namespace {

int Hand(const std::string& text, char** response, size_t* response_size) {
  char* buf = static_cast<char*>(std::malloc(text.size() + 1));
  if (buf == nullptr) return -1;
  std::memcpy(buf, text.data(), text.size());
  buf[text.size()] = '\0';
  *response = buf;
  *response_size = text.size();
  return 0;
}

std::string Import(const char* request, size_t request_size, const char* model_bytes,
                   size_t model_size, bool has_model_bytes) {
  using npuplan::onnx_plugin::EncodeResponse;
  auto decoded = npuplan::onnx_plugin::DecodeRequest(std::string_view(request, request_size));
  if (!decoded.ok()) return EncodeResponse(decoded.status());
  if (has_model_bytes) decoded->bytes = std::string_view(model_bytes, model_size);
  try {  // the importer returns Status; this is the C boundary's last resort
    return EncodeResponse(npuplan::ImportOnnxSource(*decoded));
  } catch (const std::exception& e) {
    return EncodeResponse(absl::InternalError(std::string("ONNX plugin: ") + e.what()));
  }
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) const char* npuplan_onnx_plugin_version(void) {
  return NPUPLAN_VERSION "/" NPUPLAN_ONNX_PLUGIN_ABI;
}

__attribute__((visibility("default"))) int npuplan_onnx_plugin_import(
    const char* request, size_t request_size, const char* model_bytes, size_t model_size,
    int has_model_bytes, char** response, size_t* response_size) {
  return Hand(Import(request, request_size, model_bytes, model_size, has_model_bytes != 0),
              response, response_size);
}

__attribute__((visibility("default"))) int npuplan_onnx_plugin_op_table(int min_opset,
                                                                        int max_opset,
                                                                        char** response,
                                                                        size_t* response_size) {
  return Hand(npuplan::onnx_import::OpTableMarkdown(min_opset, max_opset), response, response_size);
}

__attribute__((visibility("default"))) void npuplan_onnx_plugin_free(char* response) {
  std::free(response);
}

}  // extern "C"
