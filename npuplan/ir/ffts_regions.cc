#include "npuplan/ir/ffts_regions.h"

#include "npuplan/ir/attribute.h"

namespace npuplan {

bool IsFftsOwner(const Node& node) {
  return !node.attrs.empty() && (HasAttr(node.attrs, "_ffts_sub_graph") || HasAttr(node.attrs, "_ffts_plus_sub_graph"));
}

std::vector<uint8_t> FftsRegionGraphs(const Model& model) {
  const size_t k = model.num_graphs();
  if (k <= 1) return {};
  // 0 no, 1 yes, 2 not decided yet; each graph is decided by walking up to
  // the first decided ancestor (graphs only: no node walk).
  std::vector<uint8_t> region(k, 2);
  region[0] = 0;
  bool any = false;
  std::vector<size_t> chain;
  for (size_t g = 1; g < k; ++g) {
    size_t x = g;
    chain.clear();
    // An ownership cycle (rejected by the verifier) stops after k steps.
    while (region[x] == 2 && chain.size() <= k) {
      const Graph& graph = model.graphs()[x];
      if (!graph.parent_node.valid()) {
        region[x] = 0;
        break;
      }
      const Node& parent = model.node(graph.parent_node);
      if (IsFftsOwner(parent)) {
        region[x] = 1;
        break;
      }
      chain.push_back(x);
      x = parent.graph.index();
    }
    const uint8_t v = region[x] == 1 ? 1 : 0;
    for (size_t c : chain) region[c] = v;
    if (region[g] == 2) region[g] = 0;
    any = any || region[g] == 1;
  }
  if (!any) return {};
  return region;
}

}  // namespace npuplan
