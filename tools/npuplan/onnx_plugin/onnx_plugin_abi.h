// The C interface of the CLI's ONNX plugin, libnpuplan_onnx.so
// (docs/onnx.md, "The ONNX plugin"). The CLI loads it with dlopen() only when
// a command reads an .onnx file, so that the dynamic loader does not map and
// relocate libonnx and libprotobuf (two thirds of its symbol bindings) on
// every start-up; the plugin runs ImportOnnxSource (importers/onnx_source.h).
//
// Only bytes cross: a request as JSON text (onnx_plugin_wire.h), the model's
// bytes when the CLI has them, and a response buffer that the plugin
// allocates and frees. C++ objects do not cross: the plugin has its own copies
// of the IR's interned attribute keys and its own heap calls.
#ifndef NPUPLAN_TOOLS_NPUPLAN_ONNX_PLUGIN_ONNX_PLUGIN_ABI_H_
#define NPUPLAN_TOOLS_NPUPLAN_ONNX_PLUGIN_ONNX_PLUGIN_ABI_H_

#include <stddef.h>

extern "C" {

// Bumped on any change to these functions or to the wire format.
#define NPUPLAN_ONNX_PLUGIN_ABI "1"

// "<npuplan version>/<ABI>": the CLI loads only a plugin of its own build.
typedef const char* (*npuplan_onnx_plugin_version_fn)(void);
// Runs an import request; *response (NUL-terminated, *response_size bytes
// without the NUL) is owned by the plugin until npuplan_onnx_plugin_free.
// Returns 0, or -1 when the response could not be allocated.
typedef int (*npuplan_onnx_plugin_import_fn)(const char* request, size_t request_size,
                                             const char* model_bytes, size_t model_size,
                                             int has_model_bytes, char** response,
                                             size_t* response_size);
// The op x opset table of docs/onnx.md (`npuplan import --list-ops`).
typedef int (*npuplan_onnx_plugin_op_table_fn)(int min_opset, int max_opset, char** response,
                                               size_t* response_size);
typedef void (*npuplan_onnx_plugin_free_fn)(char* response);

}  // extern "C"

#endif  // NPUPLAN_TOOLS_NPUPLAN_ONNX_PLUGIN_ONNX_PLUGIN_ABI_H_
