// What each key and value of npuplan.graph/1 means to the streaming reader:
// which slot a key opens, what a container or scalar in a slot must be, and
// where its value goes in the collected document. The event routing that calls
// these is in graph_json_reader.cc.
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "npuplan/ir/graph_json.h"
#include "npuplan/ir/graph_json_internal.h"
#include "npuplan/ir/graph_json_reader.h"
#include "npuplan/support/echo.h"
#include "npuplan/support/str_util.h"

namespace npuplan::graph_json_internal {

using json = nlohmann::json;

// ---- keys ----------------------------------------------------------------------

void GraphReader::OnKey(std::string& k) {
  FrameState& f = frames_.back();
  f.field = nullptr;
  switch (f.frame) {
    case Frame::kTop:
      return TopKey(f, k);
    case Frame::kAttrs:
      if (AttrKeySeen(k)) {
        return FailHere(false, StrCat("duplicate attribute '", k, "'"));
      }
      f.slot = Slot::kAttrValue;
      f.key = std::move(k);
      return;
    case Frame::kOptions:
      if (doc_.model.options.count(k) != 0) {
        return FailHere(false, StrCat("duplicate option '", k, "'"));
      }
      f.slot = Slot::kOptionValue;
      f.key = std::move(k);
      return;
    case Frame::kEngines:
      if (doc_.model.engine_overrides.count(k) != 0) {
        return FailHere(false, StrCat("duplicate engine '", k, "'"));
      }
      f.slot = Slot::kEngineEntry;
      f.key = std::move(k);
      return;
    case Frame::kNode:
      return NodeKey(f, k);
    case Frame::kTensor:
      return TensorKey(f, k);
    case Frame::kSubgraph:
      return SubgraphKey(f, k);
    default:
      return;  // arrays have no keys
  }
}

void GraphReader::TopKey(FrameState& f, std::string& k) {
  if (!top_keys_.insert(k).second) return FailHere(false, StrCat("duplicate field '", k, "'"));
  if (k == "format") {
    f.slot = Slot::kFormat;
  } else if (k == "name") {
    f.slot = Slot::kGraphName;
  } else if (k == "attrs") {
    f.slot = Slot::kAttrs;
  } else if (k == "options") {
    f.slot = Slot::kOptions;
  } else if (k == "engines") {
    f.slot = Slot::kEngines;
  } else if (k == "nodes") {
    f.slot = Slot::kNodes;
  } else if (k == "subgraphs") {
    f.slot = Slot::kSubgraphs;
  } else {
    return FailHere(false, StrCat("unknown field '", k, "'"));
  }
  f.key = std::move(k);
}

void GraphReader::TensorKey(FrameState& f, const std::string& k) {
  uint32_t bit;
  if (k == "shape") {
    f.slot = Slot::kShape, f.field = "shape", bit = 1;
  } else if (k == "dtype") {
    f.slot = Slot::kDtype, f.field = "dtype", bit = 2;
  } else {
    return FailHere(false, StrCat("unknown field '", k, "'"));
  }
  if (tensor_seen_ & bit) return FailHere(false, StrCat("duplicate field '", k, "'"));
  tensor_seen_ |= bit;
}

void GraphReader::SubgraphKey(FrameState& f, const std::string& k) {
  RawGraph& g = doc_.subgraphs.back();
  uint32_t bit;
  if (k == "name") {
    f.slot = Slot::kSubgraphName, f.field = "name", bit = 1;
  } else if (k == "parent") {
    f.slot = Slot::kSubgraphParent, f.field = "parent", bit = 2;
  } else if (k == "attrs") {
    f.slot = Slot::kAttrs, f.field = "attrs", bit = 4;
  } else if (k == "nodes") {
    f.slot = Slot::kNodes, f.field = "nodes", bit = 8;
  } else {
    return FailHere(false, StrCat("unknown field '", k, "'"));
  }
  if (g.seen & bit) return FailHere(false, StrCat("duplicate field '", k, "'"));
  g.seen |= bit;
}

void GraphReader::NodeKey(FrameState& f, const std::string& k) {
  uint32_t bit = 0;
  switch (k.empty() ? '\0' : k[0]) {
    case 'n':
      if (k == "name") f.slot = Slot::kNodeName, f.field = "name", bit = kFName;
      break;
    case 't':
      if (k == "type") {
        f.slot = Slot::kNodeType, f.field = "type", bit = kFType;
      } else if (k == "topo_id") {
        f.slot = Slot::kIgnore, f.field = "topo_id", bit = kFTopoId;
      }
      break;
    case 'e':
      if (k == "engine") f.slot = Slot::kNodeEngine, f.field = "engine", bit = kFEngine;
      break;
    case 'o':
      if (k == "outputs") f.slot = Slot::kOutputs, f.field = "outputs", bit = kFOutputs;
      break;
    case 'a':
      if (k == "attrs") f.slot = Slot::kAttrs, f.field = "attrs", bit = kFAttrs;
      break;
    case 'i':
      if (k == "inputs") {
        f.slot = Slot::kRefs, f.field = "inputs", bit = kFInputs, ref_kind_ = RefKind::kInputs;
      }
      break;
    case 'c':
      if (k == "control_inputs") {
        f.slot = Slot::kRefs, f.field = "control_inputs", bit = kFControl,
        ref_kind_ = RefKind::kControl;
      }
      break;
    case 's':
      if (k == "subgraphs") {
        f.slot = Slot::kRefs, f.field = "subgraphs", bit = kFSubgraphs,
        ref_kind_ = RefKind::kSubgraphs;
      } else if (k == "stream") {
        // Written by tools that annotate graphs; the plan carries the real values.
        f.slot = Slot::kIgnore, f.field = "stream", bit = kFStream;
      }
      break;
    default:
      break;
  }
  if (bit == 0) return FailHere(false, StrCat("unknown field '", k, "'"));
  if (node_seen_ & bit) return FailHere(false, StrCat("duplicate field '", k, "'"));
  node_seen_ |= bit;
}

// ---- containers ----------------------------------------------------------------

bool GraphReader::StartContainer(Slot slot, bool object) {
  ValueKind kind = object ? ValueKind::kObject : ValueKind::kArray;
  switch (slot) {
    case Slot::kDocument:
      if (!object) {
        FailHere(false, "expected a JSON object");
        not_object_ = true;
        return true;
      }
      return Push(Frame::kTop);
    case Slot::kFormat:
    case Slot::kEngineEntry:
    case Slot::kAttrValue:
      capture_slot_ = slot;
      capture_where_ = Path(true);
      capture_.Start();
      capture_.Begin(object);
      return true;
    case Slot::kIgnore:
      ignore_depth_ = 1;
      return true;
    case Slot::kAttrs:
      if (!object) return Wrong(StrCat("expected an object, got ", KindName(kind)));
      attrs_target_ = CurrentAttrTarget();
      attrs_pending_.clear();
      attrs_seen_.clear();
      return Push(Frame::kAttrs);
    case Slot::kOptions:
      if (!object) return Wrong("expected an object of option strings");
      return Push(Frame::kOptions);
    case Slot::kEngines:
      if (!object) return Wrong("expected an object of engine configurations");
      return Push(Frame::kEngines);
    case Slot::kNodes:
      if (object) return Wrong("expected an array of nodes");
      return Push(Frame::kNodes);
    case Slot::kNode:
      if (!object) return Wrong("expected a node object");
      if (++doc_.total_nodes > opts_.limits.max_nodes) {
        return Limit(Path(true), "the graph has more nodes than allowed", opts_.limits.max_nodes,
                     "--max-nodes");
      }
      CurrentGraph().nodes.emplace_back();
      CurrentGraph().nodes.back().index = static_cast<int32_t>(frames_.back().index);
      node_seen_ = 0;
      return Push(Frame::kNode);
    case Slot::kOutputs:
      if (object) return Wrong("expected an array of tensor descriptions");
      return Push(Frame::kOutputs);
    case Slot::kTensor:
      if (!object) return Wrong("expected an object {\"shape\": [...], \"dtype\": ...}");
      CurrentNode().node.outputs.emplace_back();
      tensor_seen_ = 0;
      return Push(Frame::kTensor);
    case Slot::kShape:
      if (object) return Wrong("expected an array of integers");
      shape_product_ = 1;
      shape_overflow_ = false;
      shape_minus2_ = -1;
      return Push(Frame::kShape);
    case Slot::kRefs:
      if (object) return Wrong("expected an array of strings");
      CurrentNode().refs[static_cast<int>(ref_kind_)].begin =
          static_cast<uint32_t>(doc_.refs.size());
      return Push(Frame::kRefs);
    case Slot::kSubgraphs:
      if (object) return Wrong("expected an array of subgraphs");
      return Push(Frame::kSubgraphs);
    case Slot::kSubgraph:
      if (!object) return Wrong("expected a subgraph object");
      doc_.subgraphs.emplace_back();
      return Push(Frame::kSubgraph);
    case Slot::kSubgraphName:
      FailHere(false, "missing or empty 'name'");
      return true;
    case Slot::kGraphName:
    case Slot::kNodeName:
    case Slot::kNodeType:
      return Wrong("expected a non-empty string");
    case Slot::kNodeEngine:
    case Slot::kDtype:
    case Slot::kOptionValue:
    case Slot::kRef:
      return Wrong("expected a string");
    case Slot::kDim:
      return Wrong("expected an integer dim");
    case Slot::kSubgraphParent:
      return Wrong("expected a node name");
  }
  return true;
}

void GraphReader::EndNode() {
  Node& n = CurrentNode().node;
  if (!(node_seen_ & kFName)) return FailHere(false, "missing field 'name'");
  if (!(node_seen_ & kFType)) {
    return Fail(Bad(src_, Path(false) + " ('" + n.name + "')", "missing field 'type'"));
  }
}

void GraphReader::EndTensor() {
  const TensorDesc& t = CurrentNode().node.outputs.back();
  if (auto bytes = t.ByteSize(); !t.IsDynamic() && !bytes) {
    frames_.back().field = "shape";
    FailHere(true, "the tensor's byte size overflows int64");
  }
}

// ---- scalars -------------------------------------------------------------------

bool GraphReader::ScalarValue(Slot slot, ValueKind kind) {
  switch (slot) {
    case Slot::kDocument:
      FailHere(false, "expected a JSON object");
      not_object_ = true;
      return true;
    case Slot::kGraphName:
      if (kind != ValueKind::kString || value_string_->empty()) {
        return Wrong("expected a non-empty string");
      }
      doc_.model.set_name(*value_string_);
      return true;
    case Slot::kNodeName:
    case Slot::kNodeType: {
      if (kind != ValueKind::kString || value_string_->empty()) {
        return Wrong("expected a non-empty string");
      }
      Node& n = CurrentNode().node;
      // Copies (one exact allocation) rather than moves: the lexer keeps its buffer.
      (slot == Slot::kNodeName ? n.name : n.type).assign(*value_string_);
      return true;
    }
    case Slot::kNodeEngine:
      if (kind != ValueKind::kString) return Wrong("expected a string");
      CurrentNode().node.engine.assign(*value_string_);
      return true;
    case Slot::kOptionValue:
      return OptionValue(kind);
    case Slot::kDim:
      return Dim(kind);
    case Slot::kDtype: {
      if (kind != ValueKind::kString) return Wrong("expected a string");
      TensorDesc& t = CurrentNode().node.outputs.back();
      t.dtype.assign(*value_string_);
      if (!DTypeSize(t.dtype)) return Wrong(StrCat("unknown dtype '", t.dtype, "'"));
      return true;
    }
    case Slot::kRef: {
      if (kind != ValueKind::kString) return Wrong("expected a string");
      if (ref_kind_ != RefKind::kSubgraphs && ++total_edges_ > opts_.limits.max_edges) {
        return Limit(Path(true), "the graph has more edges (data + control inputs) than allowed",
                     opts_.limits.max_edges, "--max-edges");
      }
      doc_.refs.push_back({static_cast<uint64_t>(doc_.ref_chars.size()),
                           static_cast<uint32_t>(value_string_->size())});
      doc_.ref_chars.append(*value_string_);
      return true;
    }
    case Slot::kSubgraphName: {
      if (kind != ValueKind::kString || value_string_->empty()) {
        FailHere(false, "missing or empty 'name'");
        return true;
      }
      RawGraph& g = doc_.subgraphs.back();
      g.name = std::move(*value_string_);
      g.name_ok = true;
      return true;
    }
    case Slot::kSubgraphParent:
      if (kind != ValueKind::kString) return Wrong("expected a node name");
      doc_.subgraphs.back().parent = std::move(*value_string_);
      return true;
    case Slot::kAttrs:
      return Wrong(StrCat("expected an object, got ", KindName(kind)));
    case Slot::kOptions:
      return Wrong("expected an object of option strings");
    case Slot::kEngines:
      return Wrong("expected an object of engine configurations");
    case Slot::kNodes:
      return Wrong("expected an array of nodes");
    case Slot::kNode:
      return Wrong("expected a node object");
    case Slot::kOutputs:
      return Wrong("expected an array of tensor descriptions");
    case Slot::kTensor:
      return Wrong("expected an object {\"shape\": [...], \"dtype\": ...}");
    case Slot::kShape:
      return Wrong("expected an array of integers");
    case Slot::kRefs:
      return Wrong("expected an array of strings");
    case Slot::kSubgraphs:
      return Wrong("expected an array of subgraphs");
    case Slot::kSubgraph:
      return Wrong("expected a subgraph object");
    default:
      return true;
  }
}

// An option's value is kept as text; numbers and booleans are spelled out.
bool GraphReader::OptionValue(ValueKind kind) {
  std::string& dst = doc_.model.options[frames_.back().key];
  if (kind == ValueKind::kString) {
    dst = std::move(*value_string_);
  } else if (kind == ValueKind::kInt) {
    dst = std::to_string(value_int_);
  } else if (kind == ValueKind::kBigUint) {
    dst = std::to_string(value_uint_);
  } else if (kind == ValueKind::kBool) {
    dst = value_bool_ ? "true" : "false";
  } else {
    doc_.model.options.erase(frames_.back().key);
    return Wrong("expected a string");
  }
  return true;
}

bool GraphReader::Dim(ValueKind kind) {
  if (kind == ValueKind::kBigUint) {
    return Wrong(StrCat("dim ", value_uint_, " is out of int64 range"));
  }
  if (kind != ValueKind::kInt) return Wrong("expected an integer dim");
  int64_t dim = value_int_;
  const FrameState& f = frames_.back();
  if (dim < kUnknownRank) return Wrong(StrCat("dim ", dim, " is below -2"));
  if (dim == kUnknownRank && shape_minus2_ < 0) shape_minus2_ = f.index;
  if (shape_minus2_ >= 0 && f.index > 0) {
    // Report at the -2 itself, as a reader that knows the length up front would.
    frames_.back().index = shape_minus2_;
    return Wrong("-2 (unknown rank) must be the only dim");
  }
  if (dim >= 0 && __builtin_mul_overflow(shape_product_, dim, &shape_product_)) {
    shape_overflow_ = true;
  }
  CurrentNode().node.outputs.back().shape.push_back(dim);
  return true;
}

// ---- attributes, engine entries, "format" ---------------------------------------

bool GraphReader::ScalarAttr(ValueKind kind) {
  AttrValue v;
  switch (kind) {
    case ValueKind::kInt:
      v = AttrValue(value_int_);
      break;
    case ValueKind::kBigUint:
      return Wrong("integer attribute out of int64 range");
    case ValueKind::kFloat:
      v = AttrValue(value_double_);
      break;
    case ValueKind::kBool:
      v = AttrValue(value_bool_);
      break;
    case ValueKind::kString:
      v = AttrValue(std::move(*value_string_));
      break;
    default:
      return Wrong("unsupported attribute value of type null");
  }
  attrs_pending_.emplace_back(std::move(frames_.back().key), std::move(v));
  return true;
}

// A captured value is complete: it goes where its slot says.
void GraphReader::FinishCapture() {
  if (capture_slot_ != Slot::kFormat && capture_.duplicate()) {
    capture_.Take();
    return FailHere(
        true, StrCat("duplicate key '", EchoName(*capture_.duplicate()), "' inside the value"));
  }
  json value = capture_.Take();
  switch (capture_slot_) {
    case Slot::kFormat:
      format_ = std::move(value);
      format_seen_ = true;
      break;
    case Slot::kAttrValue: {
      const std::string& key = frames_.back().key;
      auto v = AttrFromJson(value, key);
      if (!v.ok()) return FailHere(true, std::string(v.status().message()));
      attrs_pending_.emplace_back(key, std::move(v).value());
      break;
    }
    case Slot::kEngineEntry: {
      const std::string& id = frames_.back().key;
      EngineConfig conf;
      // Defaults of an override come from the existing entry when there is one.
      if (const EngineConfig* base = doc_.model.engine_table.Find(id)) conf = *base;
      if (absl::Status s = ParseEngineConfig(id, value, src_, conf); !s.ok()) {
        return Fail(std::move(s));
      }
      doc_.model.engine_overrides[id] = conf;
      doc_.model.engine_table.SetEngine(conf);
      break;
    }
    default:
      break;
  }
}

AttrMap* GraphReader::CurrentAttrTarget() {
  const FrameState& f = frames_.back();
  if (f.frame == Frame::kNode) return &CurrentNode().node.attrs;
  if (f.frame == Frame::kSubgraph) return &doc_.subgraphs.back().attrs;
  return &doc_.model.root().attrs;
}

bool GraphReader::AttrKeySeen(const std::string& k) {
  if (attrs_target_->count(k) != 0) return true;  // from an earlier "attrs" object, if any
  if (attrs_seen_.empty()) {
    for (const auto& [key, v] : attrs_pending_) {
      if (key == k) return true;
    }
    if (attrs_pending_.size() < kAttrScanLimit) return false;
    for (const auto& [key, v] : attrs_pending_) attrs_seen_.insert(key);
  }
  return !attrs_seen_.insert(k).second;
}

void GraphReader::FlushAttrs() {
  if (attrs_target_->empty()) {
    *attrs_target_ = AttrMap::FromUnsorted(std::move(attrs_pending_));
  } else {
    for (auto& [k, v] : attrs_pending_) attrs_target_->emplace(k, std::move(v));
  }
  attrs_pending_.clear();
  attrs_seen_.clear();
}

}  // namespace npuplan::graph_json_internal
