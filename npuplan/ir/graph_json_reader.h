// Internal (not installed): the first phase of the graph reader, a SAX handler
// for nlohmann::json::sax_parse (and for a DOM walked as SAX events). It keeps
// a stack of the containers it is in and, for each value, the slot the format
// gives it; it checks each field as it comes and collects the document
// (RawDocument) for the second phase. Only attribute values that are lists or
// maps, engine entries and the "format" value become small DOMs.
//
// Split in two files: graph_json_reader.cc routes the SAX events (captured
// DOMs, ignored values, the skipping after an error, JSON paths, limits);
// graph_json_reader_fields.cc says what each key and value of the format
// means.
#ifndef NPUPLAN_IR_GRAPH_JSON_READER_H_
#define NPUPLAN_IR_GRAPH_JSON_READER_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "npuplan/ir/graph_json.h"
#include "npuplan/ir/graph_json_internal.h"

namespace npuplan::graph_json_internal {

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
enum class Frame : uint8_t {
  kTop,
  kAttrs,
  kOptions,
  kEngines,
  kNodes,
  kNode,
  kOutputs,
  kTensor,
  kShape,
  kRefs,
  kSubgraphs,
  kSubgraph
};

// Node fields (bit per field, for duplicate detection).
enum NodeField : uint32_t {
  kFName = 1,
  kFType = 2,
  kFEngine = 4,
  kFOutputs = 8,
  kFAttrs = 16,
  kFInputs = 32,
  kFControl = 64,
  kFSubgraphs = 128,
  kFStream = 256,
  kFTopoId = 512,
};

struct FrameState {
  Frame frame;
  Slot slot = Slot::kDocument;  // objects: slot of the current key's value
  int64_t index = -1;           // arrays: current element
  std::string key;  // objects with free keys (attrs, options, engines) and the top level
  const char* field = nullptr;  // objects with fixed fields: the current field's name
};

// Builds a DOM for one value (attribute lists/maps, engine entries, "format").
class DomCapture {
 public:
  bool active() const { return active_; }
  void Start() {
    active_ = true;
    root_ = nlohmann::json();
    stack_.clear();
    elements_ = 0;
    duplicate_.reset();
  }
  template <typename V>
  void Scalar(V&& v) {
    Place(nlohmann::json(std::forward<V>(v)));
  }
  void Begin(bool object) {
    nlohmann::json* slot = Place(object ? nlohmann::json::object() : nlohmann::json::array());
    stack_.push_back(slot);
  }
  void End() {
    stack_.pop_back();
    if (stack_.empty()) active_ = false;
  }
  // A key the object being built already has is kept as the capture's
  // first duplicate (the DOM would keep the last value silently).
  void Key(std::string& k) {
    if (!duplicate_ && !stack_.empty() && stack_.back()->contains(k)) duplicate_ = k;
    key_ = std::move(k);
  }
  const std::optional<std::string>& duplicate() const { return duplicate_; }
  nlohmann::json Take() {
    active_ = false;
    return std::move(root_);
  }
  size_t depth() const { return stack_.size(); }
  int64_t elements() const { return elements_; }

 private:
  nlohmann::json* Place(nlohmann::json v) {
    ++elements_;
    if (stack_.empty()) {
      root_ = std::move(v);
      if (!root_.is_structured()) active_ = false;
      return &root_;
    }
    nlohmann::json& parent = *stack_.back();
    if (parent.is_array()) {
      parent.push_back(std::move(v));
      return &parent.back();
    }
    nlohmann::json& slot = parent[key_];
    slot = std::move(v);
    return &slot;
  }

  bool active_ = false;
  nlohmann::json root_;
  std::vector<nlohmann::json*> stack_;
  std::string key_;
  int64_t elements_ = 0;
  std::optional<std::string> duplicate_;
};

class GraphReader {
 public:
  using string_t = std::string;
  using binary_t = nlohmann::json::binary_t;

  GraphReader(std::string_view source, const GraphReadOptions& opts) : src_(source), opts_(opts) {
    doc_.model.engine_table = opts.engines ? *opts.engines : EngineTable::Default();
  }

  // ---- nlohmann SAX interface (graph_json_reader.cc) -----------------------------
  bool null();
  bool boolean(bool v);
  bool number_integer(int64_t v);
  bool number_unsigned(uint64_t v);
  bool number_float(double v, const string_t& raw);
  bool string(string_t& v);
  bool binary(binary_t& v);
  bool start_object(std::size_t n);
  bool start_array(std::size_t n);
  bool end_object();
  bool end_array();
  bool key(string_t& k);
  bool parse_error(std::size_t pos, const std::string& token,
                   const nlohmann::detail::exception& ex);

  // ---- results -----------------------------------------------------------------
  const std::string& syntax_error() const { return syntax_error_; }
  const absl::Status& limit_error() const { return limit_error_; }
  // The format check, the first recorded problem, else the second phase.
  absl::StatusOr<Model> Finish();

 private:
  enum class ValueKind : uint8_t { kNull, kBool, kInt, kBigUint, kFloat, kString, kObject, kArray };

  // ---- event routing (graph_json_reader.cc) ------------------------------------
  static const char* KindName(ValueKind k);
  // JSON path of the current position: with_member adds the current key or
  // array element of the innermost container.
  std::string Path(bool with_member) const;
  static void AppendMember(std::string& p, const FrameState& f);
  // Records the first problem and switches to skipping (the text is still
  // checked for syntax, and "format" is still read: those errors come first).
  void Fail(absl::Status s) {
    if (!failed_) error_ = std::move(s);
    failed_ = true;
    format_next_ = false;
  }
  void FailHere(bool with_member, std::string_view what) {
    Fail(Bad(src_, Path(with_member), what));
  }
  bool Wrong(std::string_view what) {
    FailHere(true, what);
    return true;
  }
  // Stops the parse: a limit was exceeded.
  bool Limit(std::string where, std::string_view what, int64_t limit, std::string_view flag);
  bool CheckString(const std::string& s, bool is_key);
  bool CaptureLimit();
  // The slot of the value that starts now (advances array indices).
  Slot NextSlot();
  template <typename MakeJson>
  bool OnScalar(ValueKind kind, MakeJson make);
  bool OnStart(bool object);
  bool OnEnd();
  bool Push(Frame f) {
    FrameState state;
    state.frame = f;
    frames_.push_back(std::move(state));
    return true;
  }

  // ---- the format's fields (graph_json_reader_fields.cc) ------------------------
  // A key opens the slot of its value (the object's field table).
  void OnKey(std::string& k);
  void TopKey(FrameState& f, std::string& k);
  void NodeKey(FrameState& f, const std::string& k);
  void TensorKey(FrameState& f, const std::string& k);
  void SubgraphKey(FrameState& f, const std::string& k);
  // An object or array starts in `slot`.
  bool StartContainer(Slot slot, bool object);
  // Scalars in structural positions.
  bool ScalarValue(Slot slot, ValueKind kind);
  bool OptionValue(ValueKind kind);
  bool Dim(ValueKind kind);
  bool ScalarAttr(ValueKind kind);
  void FinishCapture();
  void EndNode();
  void EndTensor();
  RawGraph& CurrentGraph() {
    // The innermost subgraph object, if any, else the root.
    for (size_t i = frames_.size(); i-- > 0;) {
      if (frames_[i].frame == Frame::kSubgraph) return doc_.subgraphs.back();
    }
    return doc_.root;
  }
  RawNode& CurrentNode() { return CurrentGraph().nodes.back(); }
  AttrMap* CurrentAttrTarget();
  bool AttrKeySeen(const std::string& k);
  void FlushAttrs();

  std::string src_;
  const GraphReadOptions& opts_;
  // The collected document.
  RawDocument doc_;

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
  nlohmann::json format_;
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
  RefKind ref_kind_ = RefKind::kInputs;
  uint32_t node_seen_ = 0, tensor_seen_ = 0;
  int64_t shape_product_ = 1;
  bool shape_overflow_ = false;
  int64_t shape_minus2_ = -1;
  int64_t total_edges_ = 0;
  // Scalar just read.
  bool value_bool_ = false;
  int64_t value_int_ = 0;
  uint64_t value_uint_ = 0;
  double value_double_ = 0;
  std::string* value_string_ = nullptr;
};

}  // namespace npuplan::graph_json_internal

#endif  // NPUPLAN_IR_GRAPH_JSON_READER_H_
