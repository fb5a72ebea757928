// The graph reader's entry points and its SAX event routing: which events go
// to a captured DOM, which are skipped (ignored values; everything after the
// first problem but "format"), and the JSON paths and limits of its errors.
// What each field means is in graph_json_reader_fields.cc.
#include "npuplan/ir/graph_json_reader.h"

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "npuplan/ir/graph_json.h"
#include "npuplan/ir/graph_json_internal.h"
#include "npuplan/support/file_util.h"
#include "npuplan/support/status_macros.h"
#include "npuplan/support/str_util.h"
#include "npuplan/support/text_checks.h"

namespace npuplan {
namespace graph_json_internal {

using json = nlohmann::json;

// ---- nlohmann SAX interface ----------------------------------------------------

bool GraphReader::null() {
  return OnScalar(ValueKind::kNull, [&] { return json(nullptr); });
}
bool GraphReader::boolean(bool v) {
  value_bool_ = v;
  return OnScalar(ValueKind::kBool, [&] { return json(v); });
}
bool GraphReader::number_integer(int64_t v) {
  value_int_ = v;
  return OnScalar(ValueKind::kInt, [&] { return json(v); });
}
bool GraphReader::number_unsigned(uint64_t v) {
  value_uint_ = v;
  value_int_ = static_cast<int64_t>(v);
  return OnScalar(v > static_cast<uint64_t>(INT64_MAX) ? ValueKind::kBigUint : ValueKind::kInt,
                  [&] { return json(v); });
}
bool GraphReader::number_float(double v, const string_t& /*raw*/) {
  value_double_ = v;
  return OnScalar(ValueKind::kFloat, [&] { return json(v); });
}
bool GraphReader::string(string_t& v) {
  if (!CheckString(v, false)) return false;
  value_string_ = &v;
  return OnScalar(ValueKind::kString, [&] { return json(std::move(v)); });
}
bool GraphReader::binary(binary_t& /*v*/) {
  return OnScalar(ValueKind::kNull, [&] { return json(nullptr); });
}
bool GraphReader::start_object(std::size_t /*n*/) { return OnStart(true); }
bool GraphReader::start_array(std::size_t /*n*/) { return OnStart(false); }
bool GraphReader::end_object() { return OnEnd(); }
bool GraphReader::end_array() { return OnEnd(); }
bool GraphReader::key(string_t& k) {
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
bool GraphReader::parse_error(std::size_t /*pos*/, const std::string& /*token*/,
                              const nlohmann::detail::exception& ex) {
  syntax_error_ = StrCat(src_, ": not valid JSON: ", ex.what());
  return false;
}

// ---- results -------------------------------------------------------------------

absl::StatusOr<Model> GraphReader::Finish() {
  if (not_object_) return error_;
  if (!format_seen_) return Bad(src_, "$", "missing field 'format' (expected \"npuplan.graph/1\")");
  if (!format_.is_string() || format_.get_ref<const std::string&>() != kGraphFormat) {
    return Bad(
        src_, "$.format",
        StrCat("unsupported format ", format_.dump(-1, ' ', false, json::error_handler_t::replace),
               " (expected \"npuplan.graph/1\")"));
  }
  if (failed_) return error_;
  return BuildModel(std::move(doc_), src_, opts_);
}

// ---- event routing -------------------------------------------------------------

const char* GraphReader::KindName(ValueKind k) {
  switch (k) {
    case ValueKind::kNull:
      return "null";
    case ValueKind::kBool:
      return "boolean";
    case ValueKind::kInt:
    case ValueKind::kBigUint:
    case ValueKind::kFloat:
      return "number";
    case ValueKind::kString:
      return "string";
    case ValueKind::kObject:
      return "object";
    case ValueKind::kArray:
      return "array";
  }
  return "value";
}

std::string GraphReader::Path(bool with_member) const {
  std::string p = "$";
  for (size_t i = 1; i < frames_.size(); ++i) AppendMember(p, frames_[i - 1]);
  if (with_member && !frames_.empty()) AppendMember(p, frames_.back());
  return p;
}

void GraphReader::AppendMember(std::string& p, const FrameState& f) {
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

bool GraphReader::Limit(std::string where, std::string_view what, int64_t limit,
                        std::string_view flag) {
  limit_error_ = absl::InvalidArgumentError(
      StrCat(src_, ": ", where, ": ", what, " (limit ", limit, "; raise it with ", flag, ")"));
  return false;
}

bool GraphReader::CheckString(const std::string& s, bool is_key) {
  if (static_cast<int64_t>(s.size()) > opts_.limits.max_string_bytes) {
    return Limit(Path(!is_key), StrCat("a string of ", s.size(), " bytes is longer than allowed"),
                 opts_.limits.max_string_bytes, "--max-string-bytes");
  }
  return true;
}

bool GraphReader::CaptureLimit() {
  return Limit(capture_where_, "an attribute value has more elements than allowed",
               opts_.limits.max_attr_elements, "--max-attr-elements");
}

Slot GraphReader::NextSlot() {
  if (frames_.empty()) return Slot::kDocument;
  FrameState& f = frames_.back();
  switch (f.frame) {
    case Frame::kNodes:
      ++f.index;
      return Slot::kNode;
    case Frame::kOutputs:
      ++f.index;
      return Slot::kTensor;
    case Frame::kShape:
      ++f.index;
      return Slot::kDim;
    case Frame::kRefs:
      ++f.index;
      return Slot::kRef;
    case Frame::kSubgraphs:
      ++f.index;
      return Slot::kSubgraph;
    default:
      return f.slot;
  }
}

template <typename MakeJson>
bool GraphReader::OnScalar(ValueKind kind, MakeJson make) {
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

bool GraphReader::OnStart(bool object) {
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
  return StartContainer(NextSlot(), object);
}

bool GraphReader::OnEnd() {
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
      r.count = static_cast<uint32_t>(doc_.refs.size() - r.begin);
      break;
    }
    case Frame::kSubgraph:
      if (!doc_.subgraphs.back().name_ok) FailHere(false, "missing or empty 'name'");
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

namespace {

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
      case json::value_t::null:
        return r.null();
      case json::value_t::boolean:
        return r.boolean(v.get<bool>());
      case json::value_t::number_integer:
        return r.number_integer(v.get<int64_t>());
      case json::value_t::number_unsigned:
        return r.number_unsigned(v.get<uint64_t>());
      case json::value_t::number_float:
        return r.number_float(v.get<double>(), std::string());
      case json::value_t::string:
        s = v.get_ref<const std::string&>();
        return r.string(s);
      default:
        return r.null();
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

}  // namespace
}  // namespace graph_json_internal

using graph_json_internal::GraphReader;

absl::StatusOr<Model> ParseGraphJson(std::string_view text, std::string_view source,
                                     const GraphReadOptions& opts) {
  NPUPLAN_RETURN_IF_ERROR(CheckNoByteOrderMark(text, source));
  GraphReader reader(source, opts);
  bool parsed = nlohmann::json::sax_parse(text, &reader);
  return graph_json_internal::FinishRead(reader, parsed);
}

absl::StatusOr<Model> ParseGraphJsonOwned(std::string text, std::string_view source,
                                          const GraphReadOptions& opts) {
  NPUPLAN_RETURN_IF_ERROR(CheckNoByteOrderMark(text, source));
  GraphReader reader(source, opts);
  bool parsed = nlohmann::json::sax_parse(text, &reader);
  // The first phase copied all it needs (errors carry JSON paths, not
  // offsets): the text's memory goes back to the heap before the build.
  std::string().swap(text);
  return graph_json_internal::FinishRead(reader, parsed);
}

absl::StatusOr<Model> GraphFromJson(const nlohmann::json& j, std::string_view source,
                                    const GraphReadOptions& opts) {
  GraphReader reader(source, opts);
  bool parsed = graph_json_internal::WalkDom(j, reader);
  return graph_json_internal::FinishRead(reader, parsed);
}

absl::StatusOr<Model> ReadGraphFile(const std::string& path, const GraphReadOptions& opts) {
  NPUPLAN_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  return ParseGraphJsonOwned(std::move(text), path, opts);
}

}  // namespace npuplan
