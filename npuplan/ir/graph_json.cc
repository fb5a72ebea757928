#include "npuplan/ir/graph_json.h"

#include <charconv>
#include <nlohmann/json.hpp>
#include <deque>
#include <optional>
#include <set>
#include <utility>

#include "npuplan/ir/topo_sort.h"
#include "npuplan/support/file_util.h"
#include "npuplan/support/status_macros.h"
#include "npuplan/support/str_util.h"
#include "npuplan/support/text_checks.h"

namespace npuplan {
namespace {

using json = nlohmann::json;

absl::Status Bad(std::string_view source, const std::string& where, std::string_view what) {
  return absl::InvalidArgumentError(StrCat(source, ": ", where, ": ", what));
}

// "node:3" → ("node", 3); "node" → ("node", 0).
bool SplitInputRef(std::string_view ref, std::string_view& name, int64_t& index) {
  size_t colon = ref.rfind(':');
  if (colon == std::string_view::npos) {
    name = ref;
    index = 0;
    return !name.empty();
  }
  name = ref.substr(0, colon);
  std::string_view num = ref.substr(colon + 1);
  if (name.empty() || num.empty()) return false;
  auto [ptr, ec] = std::from_chars(num.data(), num.data() + num.size(), index);
  return ec == std::errc() && ptr == num.data() + num.size() && index >= 0 && index < (1 << 20);
}

// ---------------------------------------------------------------------------
// The streaming reader.
//
// Parsing collects each graph's nodes (with their reference strings in one
// arena) without touching the Model's node table; Finish() then adds them in
// the order the format defines (root nodes, then each subgraph's), resolves
// references and checks ownership, exactly as a two-phase DOM reader would.

// What the next value of the current container is.
enum class Slot : uint8_t {
  kDocument,
  kFormat,
  kGraphName,
  kAttrs,      // an attribute map (root, subgraph or node)
  kAttrValue,  // one attribute
  kOptions,
  kOptionValue,
  kEngines,
  kEngineEntry,
  kNodes,
  kNode,
  kNodeName,
  kNodeType,
  kNodeEngine,
  kOutputs,
  kTensor,
  kShape,
  kDim,
  kDtype,
  kRefs,  // inputs / control_inputs / subgraphs of a node
  kRef,
  kIgnore,  // "stream" / "topo_id" of a node: any value, not read
  kSubgraphs,
  kSubgraph,
  kSubgraphName,
  kSubgraphParent,
};

// Containers the reader descends into.
enum class Frame : uint8_t { kTop, kAttrs, kOptions, kEngines, kNodes, kNode, kOutputs, kTensor, kShape, kRefs,
                             kSubgraphs, kSubgraph };

enum class RefKind : uint8_t { kInputs, kControl, kSubgraphs };

// Node fields (bit per field, for duplicate detection).
enum NodeField : uint32_t {
  kFName = 1, kFType = 2, kFEngine = 4, kFOutputs = 8, kFAttrs = 16, kFInputs = 32, kFControl = 64,
  kFSubgraphs = 128, kFStream = 256, kFTopoId = 512,
};

struct RefRange {
  uint32_t begin = 0, count = 0;
};

struct RawNode {
  Node node;
  int32_t index = 0;  // position in its graph's "nodes" array
  RefRange refs[3];   // by RefKind
};

struct RawGraph {
  std::string name;
  bool has_name = false;
  bool name_ok = false;  // a non-empty string
  std::optional<std::string> parent;
  AttrMap attrs;
  std::deque<RawNode> nodes;  // no moves while growing
  uint32_t seen = 0;  // field bits
};

struct FrameState {
  Frame frame;
  Slot slot = Slot::kDocument;  // objects: slot of the current key's value
  int64_t index = -1;           // arrays: current element
  std::string key;              // objects with free keys (attrs, options, engines) and the top level
  const char* field = nullptr;  // objects with fixed fields: the current field's name
};

// Builds a DOM for one value (attribute lists/maps, engine entries, "format").
class DomCapture {
 public:
  bool active() const { return active_; }
  void Start() {
    active_ = true;
    root_ = json();
    stack_.clear();
    elements_ = 0;
  }
  template <typename V>
  void Scalar(V&& v) {
    Place(json(std::forward<V>(v)));
  }
  void Begin(bool object) {
    json* slot = Place(object ? json::object() : json::array());
    stack_.push_back(slot);
  }
  void End() {
    stack_.pop_back();
    if (stack_.empty()) active_ = false;
  }
  void Key(std::string& k) { key_ = std::move(k); }
  json Take() {
    active_ = false;
    return std::move(root_);
  }
  size_t depth() const { return stack_.size(); }
  int64_t elements() const { return elements_; }

 private:
  json* Place(json v) {
    ++elements_;
    if (stack_.empty()) {
      root_ = std::move(v);
      if (!root_.is_structured()) active_ = false;
      return &root_;
    }
    json& parent = *stack_.back();
    if (parent.is_array()) {
      parent.push_back(std::move(v));
      return &parent.back();
    }
    json& slot = parent[key_];
    slot = std::move(v);
    return &slot;
  }

  bool active_ = false;
  json root_;
  std::vector<json*> stack_;
  std::string key_;
  int64_t elements_ = 0;
};

class GraphReader {
 public:
  using string_t = std::string;
  using binary_t = json::binary_t;

  GraphReader(std::string_view source, const GraphReadOptions& opts) : src_(source), opts_(opts) {
    model_.engine_table = opts.engines ? *opts.engines : EngineTable::Default();
  }

  // ---- nlohmann SAX interface -------------------------------------------------
  bool null() { return OnScalar(ValueKind::kNull, [&] { return json(nullptr); }); }
  bool boolean(bool v) {
    value_bool_ = v;
    return OnScalar(ValueKind::kBool, [&] { return json(v); });
  }
  bool number_integer(int64_t v) {
    value_int_ = v;
    return OnScalar(ValueKind::kInt, [&] { return json(v); });
  }
  bool number_unsigned(uint64_t v) {
    value_uint_ = v;
    value_int_ = static_cast<int64_t>(v);
    return OnScalar(v > static_cast<uint64_t>(INT64_MAX) ? ValueKind::kBigUint : ValueKind::kInt,
                    [&] { return json(v); });
  }
  bool number_float(double v, const string_t& /*raw*/) {
    value_double_ = v;
    return OnScalar(ValueKind::kFloat, [&] { return json(v); });
  }
  bool string(string_t& v) {
    if (!CheckString(v, false)) return false;
    value_string_ = &v;
    return OnScalar(ValueKind::kString, [&] { return json(std::move(v)); });
  }
  bool binary(binary_t& /*v*/) { return OnScalar(ValueKind::kNull, [&] { return json(nullptr); }); }
  bool start_object(std::size_t /*n*/) { return OnStart(true); }
  bool start_array(std::size_t /*n*/) { return OnStart(false); }
  bool end_object() { return OnEnd(); }
  bool end_array() { return OnEnd(); }
  bool key(string_t& k) {
    if (!CheckString(k, true)) return false;
    if (capture_.active()) {
      capture_.Key(k);
      return true;
    }
    if (ignore_depth_ > 0) return true;
    if (failed_) {
      if (depth_ == 1) format_next_ = (k == "format" && !format_seen_);
      return true;
    }
    OnKey(k);
    return true;
  }
  bool parse_error(std::size_t /*pos*/, const std::string& /*token*/, const nlohmann::detail::exception& ex) {
    syntax_error_ = StrCat(src_, ": not valid JSON: ", ex.what());
    return false;
  }

  // ---- results -----------------------------------------------------------------
  const std::string& syntax_error() const { return syntax_error_; }
  const absl::Status& limit_error() const { return limit_error_; }
  absl::StatusOr<Model> Finish();

 private:
  enum class ValueKind : uint8_t { kNull, kBool, kInt, kBigUint, kFloat, kString, kObject, kArray };

  static const char* KindName(ValueKind k) {
    switch (k) {
      case ValueKind::kNull: return "null";
      case ValueKind::kBool: return "boolean";
      case ValueKind::kInt:
      case ValueKind::kBigUint:
      case ValueKind::kFloat: return "number";
      case ValueKind::kString: return "string";
      case ValueKind::kObject: return "object";
      case ValueKind::kArray: return "array";
    }
    return "value";
  }

  // JSON path of the current position: with_member adds the current key or
  // array element of the innermost container.
  std::string Path(bool with_member) const {
    std::string p = "$";
    for (size_t i = 1; i < frames_.size(); ++i) AppendMember(p, frames_[i - 1]);
    if (with_member && !frames_.empty()) AppendMember(p, frames_.back());
    return p;
  }
  static void AppendMember(std::string& p, const FrameState& f) {
    switch (f.frame) {
      case Frame::kNodes:
      case Frame::kOutputs:
      case Frame::kShape:
      case Frame::kRefs:
      case Frame::kSubgraphs:
        p += StrCat("[", f.index, "]");
        break;
      case Frame::kTop:
      case Frame::kAttrs:
      case Frame::kOptions:
      case Frame::kEngines:
        p += ".";
        p += f.key;
        break;
      default:
        if (f.field != nullptr) {
          p += ".";
          p += f.field;
        }
    }
  }

  // Records the first problem and switches to skipping (the text is still
  // checked for syntax, and "format" is still read: those errors come first).
  void Fail(absl::Status s) {
    if (!failed_) error_ = std::move(s);
    failed_ = true;
    format_next_ = false;
  }
  void FailHere(bool with_member, std::string_view what) { Fail(Bad(src_, Path(with_member), what)); }
  // Stops the parse: a limit was exceeded.
  bool Limit(std::string where, std::string_view what, int64_t limit, std::string_view flag) {
    limit_error_ = absl::InvalidArgumentError(StrCat(src_, ": ", where, ": ", what, " (limit ", limit,
                                                     "; raise it with ", flag, ")"));
    return false;
  }
  bool CheckString(const std::string& s, bool is_key) {
    if (static_cast<int64_t>(s.size()) > opts_.limits.max_string_bytes) {
      return Limit(Path(!is_key), StrCat("a string of ", s.size(), " bytes is longer than allowed"),
                   opts_.limits.max_string_bytes, "--max-string-bytes");
    }
    return true;
  }

  // The slot of the value that starts now (advances array indices).
  Slot NextSlot() {
    if (frames_.empty()) return Slot::kDocument;
    FrameState& f = frames_.back();
    switch (f.frame) {
      case Frame::kNodes: ++f.index; return Slot::kNode;
      case Frame::kOutputs: ++f.index; return Slot::kTensor;
      case Frame::kShape: ++f.index; return Slot::kDim;
      case Frame::kRefs: ++f.index; return Slot::kRef;
      case Frame::kSubgraphs: ++f.index; return Slot::kSubgraph;
      default: return f.slot;
    }
  }

  template <typename MakeJson>
  bool OnScalar(ValueKind kind, MakeJson make) {
    if (capture_.active()) {
      capture_.Scalar(make());
      if (capture_.elements() > opts_.limits.max_attr_elements) return CaptureLimit();
      if (!capture_.active()) FinishCapture();
      return true;
    }
    if (ignore_depth_ > 0) return true;
    if (failed_) {
      if (depth_ == 1 && format_next_) {
        format_next_ = false;
        format_seen_ = true;
        format_ = make();
      }
      return true;
    }
    Slot slot = NextSlot();
    switch (slot) {
      case Slot::kFormat:
        format_seen_ = true;
        format_ = make();
        return true;
      case Slot::kIgnore:
        return true;
      case Slot::kAttrValue:
        return ScalarAttr(kind);
      case Slot::kEngineEntry:
        capture_slot_ = slot;
        capture_.Start();
        capture_.Scalar(make());
        FinishCapture();
        return true;
      default:
        return ScalarValue(slot, kind);
    }
  }

  bool OnStart(bool object) {
    ValueKind kind = object ? ValueKind::kObject : ValueKind::kArray;
    if (capture_.active()) {
      capture_.Begin(object);
      if (capture_.elements() > opts_.limits.max_attr_elements) return CaptureLimit();
      if (static_cast<int64_t>(capture_.depth()) > opts_.limits.max_depth) {
        return Limit(capture_where_, "an attribute value nests lists/maps deeper than allowed",
                     opts_.limits.max_depth, "--max-depth");
      }
      ++depth_;
      return true;
    }
    ++depth_;
    if (ignore_depth_ > 0) {
      ++ignore_depth_;
      return true;
    }
    if (failed_) {
      if (depth_ == 2 && format_next_) {
        format_next_ = false;
        format_seen_ = true;
        capture_slot_ = Slot::kFormat;
        capture_where_ = "$.format";
        capture_.Start();
        capture_.Begin(object);
      }
      return true;
    }
    Slot slot = NextSlot();
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
        if (++total_nodes_ > opts_.limits.max_nodes) {
          return Limit(Path(true), "the graph has more nodes than allowed", opts_.limits.max_nodes, "--max-nodes");
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
        CurrentNode().refs[static_cast<int>(ref_kind_)].begin = static_cast<uint32_t>(refs_.size());
        return Push(Frame::kRefs);
      case Slot::kSubgraphs:
        if (object) return Wrong("expected an array of subgraphs");
        return Push(Frame::kSubgraphs);
      case Slot::kSubgraph:
        if (!object) return Wrong("expected a subgraph object");
        subgraphs_.emplace_back();
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

  bool Wrong(std::string_view what) {
    FailHere(true, what);
    return true;
  }

  bool Push(Frame f) {
    FrameState state;
    state.frame = f;
    frames_.push_back(std::move(state));
    return true;
  }

  bool OnEnd() {
    if (capture_.active()) {
      capture_.End();
      --depth_;
      if (!capture_.active()) FinishCapture();
      return true;
    }
    --depth_;
    if (ignore_depth_ > 0) {
      --ignore_depth_;
      return true;
    }
    if (failed_) return true;
    FrameState& f = frames_.back();
    switch (f.frame) {
      case Frame::kNode:
        EndNode();
        break;
      case Frame::kTensor:
        EndTensor();
        break;
      case Frame::kShape:
        if (shape_overflow_) FailHere(false, "the product of the dims overflows int64");
        break;
      case Frame::kRefs: {
        RefRange& r = CurrentNode().refs[static_cast<int>(ref_kind_)];
        r.count = static_cast<uint32_t>(refs_.size() - r.begin);
        break;
      }
      case Frame::kSubgraph:
        if (!subgraphs_.back().name_ok) FailHere(false, "missing or empty 'name'");
        break;
      case Frame::kAttrs:
        FlushAttrs();
        break;
      default:
        break;
    }
    if (!failed_) frames_.pop_back();
    return true;
  }

  void OnKey(std::string& k) {
    FrameState& f = frames_.back();
    f.field = nullptr;
    switch (f.frame) {
      case Frame::kTop:
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
        return;
      case Frame::kAttrs:
        if (AttrKeySeen(k)) {
          return FailHere(false, StrCat("duplicate attribute '", k, "'"));
        }
        f.slot = Slot::kAttrValue;
        f.key = std::move(k);
        return;
      case Frame::kOptions:
        if (model_.options.count(k) != 0) return FailHere(false, StrCat("duplicate option '", k, "'"));
        f.slot = Slot::kOptionValue;
        f.key = std::move(k);
        return;
      case Frame::kEngines:
        if (model_.engine_overrides.count(k) != 0) return FailHere(false, StrCat("duplicate engine '", k, "'"));
        f.slot = Slot::kEngineEntry;
        f.key = std::move(k);
        return;
      case Frame::kNode:
        return NodeKey(f, k);
      case Frame::kTensor: {
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
        return;
      }
      case Frame::kSubgraph: {
        RawGraph& g = subgraphs_.back();
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
        return;
      }
      default:
        return;  // arrays have no keys
    }
  }

  void NodeKey(FrameState& f, const std::string& k) {
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
        if (k == "inputs") f.slot = Slot::kRefs, f.field = "inputs", bit = kFInputs, ref_kind_ = RefKind::kInputs;
        break;
      case 'c':
        if (k == "control_inputs") {
          f.slot = Slot::kRefs, f.field = "control_inputs", bit = kFControl, ref_kind_ = RefKind::kControl;
        }
        break;
      case 's':
        if (k == "subgraphs") {
          f.slot = Slot::kRefs, f.field = "subgraphs", bit = kFSubgraphs, ref_kind_ = RefKind::kSubgraphs;
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

  // Scalars in structural positions.
  bool ScalarValue(Slot slot, ValueKind kind) {
    switch (slot) {
      case Slot::kDocument:
        FailHere(false, "expected a JSON object");
        not_object_ = true;
        return true;
      case Slot::kGraphName:
        if (kind != ValueKind::kString || value_string_->empty()) return Wrong("expected a non-empty string");
        model_.set_name(*value_string_);
        return true;
      case Slot::kNodeName:
      case Slot::kNodeType: {
        if (kind != ValueKind::kString || value_string_->empty()) return Wrong("expected a non-empty string");
        Node& n = CurrentNode().node;
        // Copies (one exact allocation) rather than moves: the lexer keeps its buffer.
        (slot == Slot::kNodeName ? n.name : n.type).assign(*value_string_);
        return true;
      }
      case Slot::kNodeEngine:
        if (kind != ValueKind::kString) return Wrong("expected a string");
        CurrentNode().node.engine.assign(*value_string_);
        return true;
      case Slot::kOptionValue: {
        std::string& dst = model_.options[frames_.back().key];
        if (kind == ValueKind::kString) {
          dst = std::move(*value_string_);
        } else if (kind == ValueKind::kInt) {
          dst = std::to_string(value_int_);
        } else if (kind == ValueKind::kBigUint) {
          dst = std::to_string(value_uint_);
        } else if (kind == ValueKind::kBool) {
          dst = value_bool_ ? "true" : "false";
        } else {
          model_.options.erase(frames_.back().key);
          return Wrong("expected a string");
        }
        return true;
      }
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
        refs_.push_back({static_cast<uint64_t>(ref_chars_.size()), static_cast<uint32_t>(value_string_->size())});
        ref_chars_.append(*value_string_);
        return true;
      }
      case Slot::kSubgraphName: {
        if (kind != ValueKind::kString || value_string_->empty()) {
          FailHere(false, "missing or empty 'name'");
          return true;
        }
        RawGraph& g = subgraphs_.back();
        g.name = std::move(*value_string_);
        g.name_ok = true;
        return true;
      }
      case Slot::kSubgraphParent:
        if (kind != ValueKind::kString) return Wrong("expected a node name");
        subgraphs_.back().parent = std::move(*value_string_);
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

  bool Dim(ValueKind kind) {
    if (kind == ValueKind::kBigUint) return Wrong(StrCat("dim ", value_uint_, " is out of int64 range"));
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
    if (dim >= 0 && __builtin_mul_overflow(shape_product_, dim, &shape_product_)) shape_overflow_ = true;
    CurrentNode().node.outputs.back().shape.push_back(dim);
    return true;
  }

  bool ScalarAttr(ValueKind kind) {
    AttrValue v;
    switch (kind) {
      case ValueKind::kInt: v = AttrValue(value_int_); break;
      case ValueKind::kBigUint: return Wrong("integer attribute out of int64 range");
      case ValueKind::kFloat: v = AttrValue(value_double_); break;
      case ValueKind::kBool: v = AttrValue(value_bool_); break;
      case ValueKind::kString: v = AttrValue(std::move(*value_string_)); break;
      default: return Wrong("unsupported attribute value of type null");
    }
    attrs_pending_.emplace_back(std::move(frames_.back().key), std::move(v));
    return true;
  }

  bool CaptureLimit() {
    return Limit(capture_where_, "an attribute value has more elements than allowed", opts_.limits.max_attr_elements,
                 "--max-attr-elements");
  }

  void FinishCapture() {
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
        if (const EngineConfig* base = model_.engine_table.Find(id)) conf = *base;
        if (absl::Status s = ParseEngineConfig(id, value, src_, conf); !s.ok()) return Fail(std::move(s));
        model_.engine_overrides[id] = conf;
        model_.engine_table.SetEngine(conf);
        break;
      }
      default:
        break;
    }
  }

  RawGraph& CurrentGraph() {
    // The innermost subgraph object, if any, else the root.
    for (size_t i = frames_.size(); i-- > 0;) {
      if (frames_[i].frame == Frame::kSubgraph) return subgraphs_.back();
    }
    return root_;
  }
  RawNode& CurrentNode() { return CurrentGraph().nodes.back(); }
  AttrMap* CurrentAttrTarget() {
    const FrameState& f = frames_.back();
    if (f.frame == Frame::kNode) return &CurrentNode().node.attrs;
    if (f.frame == Frame::kSubgraph) return &subgraphs_.back().attrs;
    return &model_.root().attrs;
  }

  void EndNode() {
    Node& n = CurrentNode().node;
    if (!(node_seen_ & kFName)) return FailHere(false, "missing field 'name'");
    if (!(node_seen_ & kFType)) return Fail(Bad(src_, Path(false) + " ('" + n.name + "')", "missing field 'type'"));
  }

  void EndTensor() {
    const TensorDesc& t = CurrentNode().node.outputs.back();
    if (auto bytes = t.ByteSize(); !t.IsDynamic() && !bytes) {
      frames_.back().field = "shape";
      FailHere(true, "the tensor's byte size overflows int64");
    }
  }

  // ---- second phase ---------------------------------------------------------
  std::string NodePath(int graph_pos, int32_t index) const {
    return graph_pos < 0 ? StrCat("$.nodes[", index, "]") : StrCat("$.subgraphs[", graph_pos, "].nodes[", index, "]");
  }
  std::string_view RefText(uint32_t i) const {
    return std::string_view(ref_chars_).substr(refs_[i].first, refs_[i].second);
  }
  absl::Status AddNodes(RawGraph& raw, GraphId g, int graph_pos);
  absl::Status Resolve(NodeId id, const RawNode& raw, int graph_pos, std::vector<NodeId>& owner);
  absl::Status CheckDepth() const;
  absl::Status CheckTypedAttrs(const Node& node, const std::string& path) const;

  std::string src_;
  const GraphReadOptions& opts_;
  Model model_;

  // Parse state.
  std::vector<FrameState> frames_;
  DomCapture capture_;
  Slot capture_slot_ = Slot::kDocument;
  std::string capture_where_;
  int64_t depth_ = 0;         // open JSON containers
  int64_t ignore_depth_ = 0;  // inside an ignored compound value
  bool failed_ = false;
  bool not_object_ = false;
  bool format_seen_ = false;
  bool format_next_ = false;
  json format_;
  absl::Status error_;
  absl::Status limit_error_;
  std::string syntax_error_;
  std::set<std::string, std::less<>> top_keys_;
  AttrMap* attrs_target_ = nullptr;
  // The attrs object being read: entries in file order, sorted into
  // *attrs_target_ once at its end (AttrMap is a sorted array: inserting
  // keys out of order one by one would be quadratic). Keys are checked for
  // repeats as they come: by a scan while few, then through `attrs_seen_`.
  std::vector<std::pair<std::string, AttrValue>> attrs_pending_;
  std::set<std::string, std::less<>> attrs_seen_;
  static constexpr size_t kAttrScanLimit = 16;
  bool AttrKeySeen(const std::string& k) {
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
  void FlushAttrs() {
    if (attrs_target_->empty()) {
      *attrs_target_ = AttrMap::FromUnsorted(std::move(attrs_pending_));
    } else {
      for (auto& [k, v] : attrs_pending_) attrs_target_->emplace(k, std::move(v));
    }
    attrs_pending_.clear();
    attrs_seen_.clear();
  }
  RefKind ref_kind_ = RefKind::kInputs;
  uint32_t node_seen_ = 0, tensor_seen_ = 0;
  int64_t shape_product_ = 1;
  bool shape_overflow_ = false;
  int64_t shape_minus2_ = -1;
  int64_t total_nodes_ = 0, total_edges_ = 0;
  // Scalar just read.
  bool value_bool_ = false;
  int64_t value_int_ = 0;
  uint64_t value_uint_ = 0;
  double value_double_ = 0;
  std::string* value_string_ = nullptr;

  // Collected document.
  RawGraph root_;
  std::vector<RawGraph> subgraphs_;
  std::string ref_chars_;
  std::vector<std::pair<uint64_t, uint32_t>> refs_;  // (offset, length) in ref_chars_
  struct Pending {
    NodeId id;
    int graph_pos;
    const RawNode* raw;
  };
  std::vector<Pending> pending_;
};

absl::Status GraphReader::AddNodes(RawGraph& raw, GraphId g, int graph_pos) {
  const EngineTable& table = model_.engine_table;
  for (RawNode& r : raw.nodes) {
    Node& node = r.node;
    if (model_.FindNode(node.name).valid()) {
      return Bad(src_, NodePath(graph_pos, r.index) + ".name", StrCat("duplicate node name '", node.name, "'"));
    }
    if (node.engine.empty()) node.engine = table.EngineForOp(node.type);
    if (table.Find(node.engine) == nullptr) {
      return Bad(src_, NodePath(graph_pos, r.index),
                 StrCat("node '", node.name, "' has unknown engine '", node.engine,
                        "' (not in the engine table; add it with --engines or \"engines\")"));
    }
    NodeId id = model_.AddNode(g, std::move(node));
    pending_.push_back({id, graph_pos, &r});
  }
  return absl::OkStatus();
}

// Inputs, control inputs and subgraph links, now that every name exists.
// Paths are built only for an error.
absl::Status GraphReader::Resolve(NodeId id, const RawNode& raw, int graph_pos, std::vector<NodeId>& owner) {
  Node& node = model_.node(id);
  auto where = [&](const char* field, uint32_t i) {
    return StrCat(NodePath(graph_pos, raw.index), ".", field, "[", i, "]");
  };
  const RefRange& in = raw.refs[static_cast<int>(RefKind::kInputs)];
  node.inputs.reserve(in.count);
  for (uint32_t i = 0; i < in.count; ++i) {
    std::string_view ref = RefText(in.begin + i);
    std::string_view name;
    int64_t index;
    if (!SplitInputRef(ref, name, index)) {
      return Bad(src_, where("inputs", i), StrCat("malformed input '", ref, "' (expected \"node:index\")"));
    }
    NodeId producer = model_.FindNode(name);
    if (!producer.valid()) return Bad(src_, where("inputs", i), StrCat("unknown node '", name, "'"));
    const Node& prod = model_.node(producer);
    if (index >= static_cast<int64_t>(prod.outputs.size())) {
      return Bad(src_, where("inputs", i),
                 StrCat("output anchor ", index, " of '", name, "' is out of range (it has ", prod.outputs.size(),
                        " outputs)"));
    }
    if (prod.graph != node.graph) {
      return Bad(src_, where("inputs", i),
                 StrCat("input '", name, "' is in graph '", model_.graph(prod.graph).name,
                        "', not in this node's graph '", model_.graph(node.graph).name, "'"));
    }
    node.inputs.push_back(OutputRef{producer, static_cast<int32_t>(index)});
  }
  const RefRange& ctrl = raw.refs[static_cast<int>(RefKind::kControl)];
  node.control_inputs.reserve(ctrl.count);
  for (uint32_t i = 0; i < ctrl.count; ++i) {
    std::string_view name = RefText(ctrl.begin + i);
    NodeId producer = model_.FindNode(name);
    if (!producer.valid()) return Bad(src_, where("control_inputs", i), StrCat("unknown node '", name, "'"));
    if (model_.node(producer).graph != node.graph) {
      return Bad(src_, where("control_inputs", i), StrCat("control input '", name, "' is in another graph"));
    }
    node.control_inputs.push_back(producer);
  }
  const RefRange& subs = raw.refs[static_cast<int>(RefKind::kSubgraphs)];
  for (uint32_t i = 0; i < subs.count; ++i) {
    std::string_view name = RefText(subs.begin + i);
    GraphId g = model_.FindGraph(name);
    if (!g.valid() || g == kRootGraph) {
      return Bad(src_, where("subgraphs", i), StrCat("subgraph '", name, "' is not defined"));
    }
    if (owner[g.index()].valid()) {
      return Bad(src_, where("subgraphs", i),
                 StrCat("subgraph '", name, "' is owned twice (by '", model_.node(owner[g.index()]).name, "' and '",
                        node.name, "')"));
    }
    owner[g.index()] = id;
    node.subgraphs.push_back(g);
    model_.graph(g).parent_node = id;
    model_.graph(g).parent_graph = node.graph;
  }
  return absl::OkStatus();
}

// Subgraph nesting depth (root = 0) against the limit; a subgraph whose chain
// of owners never reaches the root (an ownership cycle) is rejected.
absl::Status GraphReader::CheckDepth() const {
  const size_t n = model_.num_graphs();
  std::vector<int64_t> depth(n, -1);  // -1 unknown, -2 on the current walk / cycle
  depth[0] = 0;
  std::vector<size_t> path;
  for (size_t start = 1; start < n; ++start) {
    path.clear();
    size_t g = start;
    while (depth[g] == -1) {
      depth[g] = -2;
      path.push_back(g);
      GraphId parent = model_.graph(GraphId(static_cast<int32_t>(g))).parent_graph;
      if (!parent.valid()) break;
      g = parent.index();
    }
    int64_t base = depth[g];
    for (size_t i = path.size(); i-- > 0;) {
      depth[path[i]] = base < 0 ? -3 : ++base;  // -3: not under the root
    }
    if (depth[start] < 0) {
      return Bad(src_, StrCat("$.subgraphs[", start - 1, "]"),
                 StrCat("subgraph '", model_.graph(GraphId(static_cast<int32_t>(start))).name,
                        "' is not reachable from the root graph (its owners form a cycle)"));
    }
    if (depth[start] > opts_.limits.max_depth) {
      return Bad(src_, StrCat("$.subgraphs[", start - 1, "]"),
                 StrCat("subgraph '", model_.graph(GraphId(static_cast<int32_t>(start))).name, "' is nested ",
                        depth[start], " deep, deeper than allowed (limit ", opts_.limits.max_depth,
                        "; raise it with --max-depth)"));
    }
  }
  return absl::OkStatus();
}

// Attributes whose value later stages read as a number: a value of the wrong
// type would be silently ignored (a string `_parent_node_index`, a string
// `_node_sqe_num`), a negative cost or task count would be clamped. Refused
// here, naming the attribute's JSON path.
absl::Status GraphReader::CheckTypedAttrs(const Node& node, const std::string& path) const {
  auto where = [&](std::string_view attr) { return StrCat(path, ".attrs.", attr); };
  struct IntAttr {
    const char* name;
    bool task_count;  // >= 0 (`_parent_node_index` is range-checked below)
  };
  for (const IntAttr a : {IntAttr{"_parent_node_index", false}, IntAttr{"_node_sqe_num", true},
                          IntAttr{"_hccl_task_num", true}, IntAttr{"_hccl_attached_task_num", true}}) {
    const AttrValue* v = FindAttr(node.attrs, a.name);
    if (v == nullptr) continue;
    const int64_t* i = v->as<int64_t>();
    if (i == nullptr) {
      return Bad(src_, where(a.name), StrCat("expected an integer, found a value of type ", v->TypeName()));
    }
    if (a.task_count && *i < 0) {
      return Bad(src_, where(a.name),
                 StrCat("node '", node.name, "': attribute ", a.name, " is ", *i, "; a task count must be >= 0"));
    }
  }
  if (const AttrValue* v = FindAttr(node.attrs, "_cost")) {
    const int64_t* i = v->as<int64_t>();
    const double* d = v->as<double>();
    if (i == nullptr && d == nullptr) {
      return Bad(src_, where("_cost"), StrCat("expected a number >= 0, found a value of type ", v->TypeName()));
    }
    if (i != nullptr ? *i < 0 : !(*d >= 0)) {
      return Bad(src_, where("_cost"), StrCat("node '", node.name, "': a cost must be >= 0, found ",
                                              i != nullptr ? StrCat(*i) : StrCat(*d)));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<Model> GraphReader::Finish() {
  if (not_object_) return error_;
  if (!format_seen_) return Bad(src_, "$", "missing field 'format' (expected \"npuplan.graph/1\")");
  if (!format_.is_string() || format_.get_ref<const std::string&>() != kGraphFormat) {
    return Bad(src_, "$.format", StrCat("unsupported format ", format_.dump(-1, ' ', false, json::error_handler_t::replace),
                                        " (expected \"npuplan.graph/1\")"));
  }
  if (failed_) return error_;

  pending_.reserve(total_nodes_);
  model_.Reserve(static_cast<size_t>(total_nodes_));
  NPUPLAN_RETURN_IF_ERROR(AddNodes(root_, kRootGraph, -1));
  for (size_t i = 0; i < subgraphs_.size(); ++i) {
    RawGraph& sg = subgraphs_[i];
    if (model_.FindGraph(sg.name).valid()) {
      return Bad(src_, StrCat("$.subgraphs[", i, "].name"), StrCat("duplicate graph name '", sg.name, "'"));
    }
    GraphId g = model_.AddDetachedGraph(sg.name);
    model_.graph(g).attrs = std::move(sg.attrs);
    NPUPLAN_RETURN_IF_ERROR(AddNodes(sg, g, static_cast<int>(i)));
  }
  std::vector<NodeId> owner(model_.num_graphs());
  for (const Pending& p : pending_) NPUPLAN_RETURN_IF_ERROR(Resolve(p.id, *p.raw, p.graph_pos, owner));
  for (size_t g = 1; g < model_.num_graphs(); ++g) {
    auto w = [g] { return StrCat("$.subgraphs[", g - 1, "]"); };
    const std::string& gname = model_.graph(GraphId(static_cast<int32_t>(g))).name;
    if (!owner[g].valid()) {
      return Bad(src_, w(), StrCat("subgraph '", gname, "' is not listed in any node's \"subgraphs\""));
    }
    const std::optional<std::string>& parent = subgraphs_[g - 1].parent;
    if (parent.has_value() && *parent != model_.node(owner[g]).name) {
      return Bad(src_, w() + ".parent",
                 StrCat("subgraph '", gname, "' names parent '", *parent, "' but is listed by node '",
                        model_.node(owner[g]).name, "'"));
    }
  }
  NPUPLAN_RETURN_IF_ERROR(CheckDepth());
  for (const Pending& p : pending_) {
    NPUPLAN_RETURN_IF_ERROR(CheckTypedAttrs(model_.node(p.id), NodePath(p.graph_pos, p.raw->index)));
  }
  // A subgraph's `_parent_node_index` must name an input of its owner: later
  // stages index the owner's inputs with it.
  for (const Pending& p : pending_) {
    if (p.graph_pos < 0) continue;
    const Node& node = model_.node(p.id);
    std::optional<int64_t> idx = GetIntAttr(node.attrs, "_parent_node_index");
    if (!idx.has_value()) continue;
    const Node& owner_node = model_.node(model_.graph(node.graph).parent_node);
    if (*idx < 0 || *idx >= static_cast<int64_t>(owner_node.inputs.size())) {
      return Bad(src_, NodePath(p.graph_pos, p.raw->index) + ".attrs._parent_node_index",
                 StrCat("node '", node.name, "' has _parent_node_index ", *idx, " but its parent '", owner_node.name,
                        "' has ", owner_node.inputs.size(), " inputs"));
    }
  }
  // The collected document is no longer needed.
  pending_ = {};
  root_ = {};
  subgraphs_ = {};
  ref_chars_ = {};
  refs_ = {};
  if (opts_.topo_sort) {
    auto mode = TopoSortMode::kBfs;
    if (!opts_.topo_sorting_mode.empty()) {  // --option wins over the graph's options
      NPUPLAN_ASSIGN_OR_RETURN(mode, ParseTopoSortMode(opts_.topo_sorting_mode));
    } else if (auto it = model_.options.find("ge.topoSortingMode"); it != model_.options.end()) {
      auto parsed = ParseTopoSortMode(it->second);
      if (!parsed.ok()) return Bad(src_, "$.options", std::string(parsed.status().message()));
      mode = *parsed;
    }
    absl::Status s = TopologicalSort(model_, mode);
    if (!s.ok()) return absl::InvalidArgumentError(StrCat(src_, ": ", s.message()));
  } else {
    RenumberTopoIds(model_);
  }
  return std::move(model_);
}

absl::StatusOr<Model> FinishRead(GraphReader& reader, bool parsed) {
  if (!reader.syntax_error().empty()) return absl::InvalidArgumentError(reader.syntax_error());
  if (!reader.limit_error().ok()) return reader.limit_error();
  if (!parsed) return absl::InternalError("graph reader stopped without a reason");
  return reader.Finish();
}

// Feeds a DOM to the reader as SAX events, without recursion.
bool WalkDom(const json& root, GraphReader& r) {
  struct Item {
    const json* value;
    size_t next = 0;
    json::object_t::const_iterator it;
  };
  std::vector<Item> stack;
  std::string s;
  auto scalar = [&](const json& v) -> bool {
    switch (v.type()) {
      case json::value_t::null: return r.null();
      case json::value_t::boolean: return r.boolean(v.get<bool>());
      case json::value_t::number_integer: return r.number_integer(v.get<int64_t>());
      case json::value_t::number_unsigned: return r.number_unsigned(v.get<uint64_t>());
      case json::value_t::number_float: return r.number_float(v.get<double>(), std::string());
      case json::value_t::string: s = v.get_ref<const std::string&>(); return r.string(s);
      default: return r.null();
    }
  };
  auto open = [&](const json& v) -> bool {
    if (v.is_object()) {
      if (!r.start_object(v.size())) return false;
      stack.push_back({&v, 0, v.get_ref<const json::object_t&>().begin()});
      return true;
    }
    if (v.is_array()) {
      if (!r.start_array(v.size())) return false;
      stack.push_back({&v, 0, {}});
      return true;
    }
    return scalar(v);
  };
  if (!open(root)) return false;
  while (!stack.empty()) {
    Item& top = stack.back();
    if (top.value->is_object()) {
      const auto& obj = top.value->get_ref<const json::object_t&>();
      if (top.it == obj.end()) {
        stack.pop_back();
        if (!r.end_object()) return false;
        continue;
      }
      auto it = top.it++;
      s = it->first;
      if (!r.key(s)) return false;
      if (!open(it->second)) return false;
    } else {
      if (top.next == top.value->size()) {
        stack.pop_back();
        if (!r.end_array()) return false;
        continue;
      }
      if (!open((*top.value)[top.next++])) return false;
    }
  }
  return true;
}

// ---------------------------------------------------------------------------
// Writer.

void WriteAttrMap(const AttrMap& m, JsonWriter& w) {
  w.BeginObject();
  for (const auto& [k, v] : m) {
    w.Key(k);
    WriteAttr(v, w);
  }
  w.EndObject();
}

void WriteNode(const Model& model, const Node& n, JsonWriter& w) {
  w.BeginObject();
  if (!n.attrs.empty()) {
    w.Key("attrs");
    WriteAttrMap(n.attrs, w);
  }
  if (!n.control_inputs.empty()) {
    w.Key("control_inputs");
    w.BeginArray();
    for (NodeId c : n.control_inputs) w.String(model.node(c).name);
    w.EndArray();
  }
  w.Field("engine", n.engine);
  if (!n.inputs.empty()) {
    w.Key("inputs");
    w.BeginArray();
    std::string ref;
    for (const OutputRef& in : n.inputs) {
      ref = model.node(in.node).name;
      ref += ':';
      ref += std::to_string(in.index);
      w.String(ref);
    }
    w.EndArray();
  }
  w.Field("name", n.name);
  if (!n.outputs.empty()) {
    w.Key("outputs");
    w.BeginArray();
    for (const TensorDesc& t : n.outputs) {
      w.BeginObject();
      w.Field("dtype", t.dtype);
      w.Key("shape");
      w.IntArray(t.shape);
      w.EndObject();
    }
    w.EndArray();
  }
  if (!n.subgraphs.empty()) {
    w.Key("subgraphs");
    w.BeginArray();
    for (GraphId g : n.subgraphs) w.String(model.graph(g).name);
    w.EndArray();
  }
  w.Field("type", n.type);
  w.EndObject();
}

}  // namespace

json AttrToJson(const AttrValue& v) {
  std::string text;
  JsonWriter w(&text, -1);
  WriteAttr(v, w);
  return json::parse(text);
}

void WriteAttr(const AttrValue& v, JsonWriter& w) {
  std::visit(
      [&w](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, AttrMap>) {
          WriteAttrMap(x, w);
        } else if constexpr (std::is_same_v<T, AttrValue::MapList>) {
          w.BeginArray();
          for (const auto& m : x) WriteAttrMap(m, w);
          w.EndArray();
        } else if constexpr (std::is_same_v<T, AttrValue::BoolList>) {
          w.BeginArray();
          for (bool b : x) w.Bool(b);
          w.EndArray();
        } else if constexpr (std::is_same_v<T, AttrValue::IntList>) {
          w.IntArray(x);
        } else if constexpr (std::is_same_v<T, AttrValue::FloatList>) {
          w.BeginArray();
          for (double d : x) w.Double(d);
          w.EndArray();
        } else if constexpr (std::is_same_v<T, AttrValue::StringList>) {
          w.StringArray(x);
        } else if constexpr (std::is_same_v<T, int64_t>) {
          w.Int(x);
        } else if constexpr (std::is_same_v<T, double>) {
          w.Double(x);
        } else if constexpr (std::is_same_v<T, bool>) {
          w.Bool(x);
        } else {
          w.String(x);
        }
      },
      v.get());
}

absl::StatusOr<AttrValue> AttrFromJson(const json& j, const std::string& where) {
  switch (j.type()) {
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
      if (j.is_number_unsigned() && j.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) {
        return absl::InvalidArgumentError("integer attribute out of int64 range");
      }
      return AttrValue(j.get<int64_t>());
    case json::value_t::number_float:
      return AttrValue(j.get<double>());
    case json::value_t::boolean:
      return AttrValue(j.get<bool>());
    case json::value_t::string:
      return AttrValue(j.get<std::string>());
    case json::value_t::object: {
      AttrMap m;
      for (const auto& [k, v] : j.items()) {
        NPUPLAN_ASSIGN_OR_RETURN(AttrValue av, AttrFromJson(v, where + "." + k));
        m.emplace(k, std::move(av));
      }
      return AttrValue(std::move(m));
    }
    case json::value_t::array: {
      if (j.empty()) return AttrValue(AttrValue::IntList{});
      auto all = [&](auto pred) {
        for (const auto& e : j) {
          if (!pred(e)) return false;
        }
        return true;
      };
      if (all([](const json& e) { return e.is_number_integer(); })) {
        AttrValue::IntList l;
        for (const auto& e : j) {
          if (e.is_number_unsigned() && e.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) {
            return absl::InvalidArgumentError("integer attribute out of int64 range");
          }
          l.push_back(e.get<int64_t>());
        }
        return AttrValue(std::move(l));
      }
      if (all([](const json& e) { return e.is_number(); })) {
        AttrValue::FloatList l;
        for (const auto& e : j) l.push_back(e.get<double>());
        return AttrValue(std::move(l));
      }
      if (all([](const json& e) { return e.is_boolean(); })) {
        AttrValue::BoolList l;
        for (const auto& e : j) l.push_back(e.get<bool>());
        return AttrValue(std::move(l));
      }
      if (all([](const json& e) { return e.is_string(); })) {
        AttrValue::StringList l;
        for (const auto& e : j) l.push_back(e.get<std::string>());
        return AttrValue(std::move(l));
      }
      if (all([](const json& e) { return e.is_object(); })) {
        AttrValue::MapList l;
        for (size_t i = 0; i < j.size(); ++i) {
          NPUPLAN_ASSIGN_OR_RETURN(AttrValue av, AttrFromJson(j[i], StrCat(where, "[", i, "]")));
          l.push_back(std::move(*std::get_if<AttrMap>(&av.get())));
        }
        return AttrValue(std::move(l));
      }
      return absl::InvalidArgumentError("list attribute mixes element types");
    }
    default:
      return absl::InvalidArgumentError(StrCat("unsupported attribute value of type ", j.type_name()));
  }
}

absl::StatusOr<Model> ParseGraphJson(std::string_view text, std::string_view source, const GraphReadOptions& opts) {
  NPUPLAN_RETURN_IF_ERROR(CheckNoByteOrderMark(text, source));
  GraphReader reader(source, opts);
  bool parsed = json::sax_parse(text, &reader);
  return FinishRead(reader, parsed);
}

absl::StatusOr<Model> GraphFromJson(const json& j, std::string_view source, const GraphReadOptions& opts) {
  GraphReader reader(source, opts);
  bool parsed = WalkDom(j, reader);
  return FinishRead(reader, parsed);
}

absl::StatusOr<Model> ReadGraphFile(const std::string& path, const GraphReadOptions& opts) {
  NPUPLAN_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  return ParseGraphJson(text, path, opts);
}

void WriteGraph(const Model& model, JsonWriter& w) {
  w.BeginObject();
  if (!model.root().attrs.empty()) {
    w.Key("attrs");
    WriteAttrMap(model.root().attrs, w);
  }
  if (!model.engine_overrides.empty()) {
    w.Key("engines");
    w.BeginObject();
    for (const auto& [id, c] : model.engine_overrides) {
      w.Key(id);
      w.BeginObject();
      w.Field("attach", c.attach);
      w.Field("compute_cost", c.compute_cost);
      w.Field("independent", c.independent);
      w.Field("scheduler", c.scheduler);
      w.Field("skip_assign_stream", c.skip_assign_stream);
      w.EndObject();
    }
    w.EndObject();
  }
  w.Field("format", kGraphFormat);
  w.Field("name", model.name());
  w.Key("nodes");
  w.BeginArray();
  for (NodeId n : model.root().nodes) WriteNode(model, model.node(n), w);
  w.EndArray();
  if (!model.options.empty()) {
    w.Key("options");
    w.BeginObject();
    for (const auto& [k, v] : model.options) w.Field(k, v);
    w.EndObject();
  }
  std::vector<GraphId> order = model.GraphsPreOrder();
  if (order.size() > 1) {
    w.Key("subgraphs");
    w.BeginArray();
    for (GraphId g : order) {
      if (g == kRootGraph) continue;
      const Graph& graph = model.graph(g);
      w.BeginObject();
      if (!graph.attrs.empty()) {
        w.Key("attrs");
        WriteAttrMap(graph.attrs, w);
      }
      w.Field("name", graph.name);
      w.Key("nodes");
      w.BeginArray();
      for (NodeId n : graph.nodes) WriteNode(model, model.node(n), w);
      w.EndArray();
      w.Field("parent", model.node(graph.parent_node).name);
      w.EndObject();
    }
    w.EndArray();
  }
  w.EndObject();
}

std::string WriteGraphJson(const Model& model) {
  std::string out;
  JsonWriter w(&out, 1);
  WriteGraph(model, w);
  out.push_back('\n');
  return out;
}

}  // namespace npuplan
