#include "npuplan/ir/owner_control_inputs.h"

#include <algorithm>

#include "npuplan/ir/attached_streams.h"
#include "npuplan/ir/attribute.h"
#include "npuplan/ir/ffts_regions.h"

namespace npuplan {

bool IsGraphSource(const Model& model, const Node& node) {
  if (!node.inputs.empty() || CarriesOnlyOrder(node)) return false;
  return std::all_of(node.control_inputs.begin(), node.control_inputs.end(),
                     [&](NodeId c) { return CarriesOnlyOrder(model.node(c)); });
}

OwnerControlInputs::OwnerControlInputs(const Model& model) {
  if (model.num_graphs() <= 1) return;
  std::vector<int32_t> set_of(model.num_graphs(), -1);
  std::vector<uint8_t> in_task(model.num_graphs(), 0);
  bool any = false;
  // Parents precede their subgraphs in pre-order: the enclosing set is ready.
  for (GraphId id : model.GraphsPreOrder()) {
    const Graph& g = model.graph(id);
    if (!g.parent_node.valid() || !g.parent_graph.valid()) continue;
    const Node& owner = model.node(g.parent_node);
    // Inside an owner's own task (at any depth): its edges order the subgraph.
    if (in_task[g.parent_graph.index()] || IsFftsOwner(owner) ||
        HasAttr(owner.attrs, "_thread_scope_id")) {
      in_task[id.index()] = 1;
      continue;
    }
    const int32_t outer = set_of[g.parent_graph.index()];
    std::vector<NodeId> own;
    for (NodeId c : owner.control_inputs) {
      if (c.valid() && !CarriesOnlyOrder(model.node(c))) own.push_back(c);
    }
    if (own.empty()) {
      set_of[id.index()] = outer;  // shared: no copy per nesting level
      continue;
    }
    if (outer >= 0) own.insert(own.end(), sets_[outer].begin(), sets_[outer].end());
    std::sort(own.begin(), own.end());
    own.erase(std::unique(own.begin(), own.end()), own.end());
    set_of[id.index()] = static_cast<int32_t>(sets_.size());
    sets_.push_back(std::move(own));
    any = true;
  }
  if (any) set_of_graph_ = std::move(set_of);
}

}  // namespace npuplan
