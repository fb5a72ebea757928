// AssignAttachedStreamPass (`assign-attached-stream-pass`, SPEC S7,
// ge-reference §2.5): attached (secondary) streams, after the main streams.
//
// For the root graph then every subgraph (pre-order), nodes without
// `_disable_attached_resource` request attached streams by attribute:
//   V1 `_attached_stream_info`: a map {policy: "group", _attached_stream_key: K}
//      with the group from the node's "group" attribute, reuse key K; or a
//      list of such maps (group "_default_stream_info_group", reuse key
//      K + "_stream_<main stream>").
//   V2 `_attached_stream_info_list`: a list of {name (required), reuse_key,
//      force_reuse, required (default true)}; reuse key = reuse_key + name +
//      ("" if force_reuse else "_stream_<main stream>"); only required entries
//      get a stream. V2 wins when both are present.
// Groups are visited in order of first appearance (GE: unordered_map), keys in
// byte order; each (group, key) gets the next id, continuing after the main
// streams. So equal keys share a stream, different main streams get different
// attached streams unless force_reuse. At most one attached stream per node.
//
// Requires: logical-streams. Provides: attached-streams. Preserves structure.
// Decision keywords: AttachedStream (node, group, key, stream),
// AttachedResourceDisabled (node).
#ifndef NPUPLAN_STREAM_ASSIGN_ATTACHED_STREAM_PASS_H_
#define NPUPLAN_STREAM_ASSIGN_ATTACHED_STREAM_PASS_H_

#include "npuplan/pass/pass.h"

namespace npuplan {

class AssignAttachedStreamPass final : public Pass {
 public:
  static constexpr std::string_view kName = "assign-attached-stream-pass";
  std::string_view name() const override { return kName; }
  IrProperties required() const override { return static_cast<IrProperties>(IrProperty::kLogicalStreams); }
  IrProperties provided() const override { return static_cast<IrProperties>(IrProperty::kAttachedStreams); }
  bool preserves_structure() const override { return true; }
  absl::StatusOr<bool> Run(Plan& plan, PassContext& ctx) override;
};

}  // namespace npuplan

#endif  // NPUPLAN_STREAM_ASSIGN_ATTACHED_STREAM_PASS_H_
