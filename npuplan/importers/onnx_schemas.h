// The ONNX op schemas the importer knows (docs/onnx.md, "Opsets and ops").
//
// Debian's libonnx 1.12 registers the default domain (ai.onnx) up to opset 17
// and ai.onnx.ml. Exporters write opsets up to 22 and ONNX Runtime writes
// com.microsoft contrib ops into optimised models. The importer therefore
// runs libonnx's shape inference, schema check and data propagation with its
// own registry: libonnx's schemas, plus npuplan's schemas for
//   - every default-domain op whose signature or semantics changed in opsets
//     18–22 (Reduce* axes as an input, Split num_outputs, Pad axes, Resize
//     axes/keep_aspect_ratio_policy, Cast saturate, QuantizeLinear
//     output_dtype/block_size, …) and the ops new in 18–20 (Gelu,
//     GroupNormalization, Col2Im, …), with the since-version of the ONNX
//     release that introduced the change; ops whose later versions only added
//     element types (most of opset 19, 21 and 22) keep libonnx's schema, which
//     is right for shapes — inference runs without type checking;
//   - the com.microsoft ops ONNX Runtime's optimisers write (FusedMatMul,
//     Attention, SkipLayerNormalization, BiasGelu, FastGelu, QuickGelu, …).
// A lookup returns the schema with the greatest since-version not above the
// model's opset among both sources, exactly as libonnx's own registry does.
// This is the "provide shape inference" choice of issue 18 (not a rewrite to
// opset-17 forms): the nodes keep their own inputs and attributes, so what
// the IR records is what the model says.
#ifndef NPUPLAN_IMPORTERS_ONNX_SCHEMAS_H_
#define NPUPLAN_IMPORTERS_ONNX_SCHEMAS_H_

#include <string>
#include <vector>

#include "onnx/defs/schema.h"

namespace npuplan::onnx_import {

inline constexpr char kMicrosoftDomain[] = "com.microsoft";

// libonnx's schemas plus npuplan's (thread-safe after the first call).
const onnx::ISchemaRegistry* Schemas();

// One schema version the importer knows.
struct OpSchemaVersion {
  std::string domain;  // "" = ai.onnx
  std::string op;
  int since = 0;
  bool npuplan = false;  // npuplan's schema (else libonnx's)
  bool deprecated = false;
};
// Every schema version of the default domain, com.microsoft and ai.onnx.ml,
// sorted by domain, op, since.
std::vector<OpSchemaVersion> KnownSchemaVersions();

// The op × opset-range × status table of docs/onnx.md (markdown), built from
// KnownSchemaVersions() for opsets [min_opset, max_opset].
std::string OpTableMarkdown(int min_opset, int max_opset);

}  // namespace npuplan::onnx_import

#endif  // NPUPLAN_IMPORTERS_ONNX_SCHEMAS_H_
