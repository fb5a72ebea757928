#include "npuplan/stream/refresh_continuous_streams.h"

#include <algorithm>
#include <vector>

#include "npuplan/ir/node_prefetch.h"

namespace npuplan::stream {

int64_t RefreshContinuousStreams::Run(Model& model, int64_t id_bound, DecisionLog* log) {
  // Two walks over the node table: mark the ids in use, then rewrite the
  // nodes whose id changes (ids >= id_bound are left alone).
  // Each node's stream is a cache miss of its own: fetched ahead.
  const size_t count = model.num_nodes();
  std::vector<int64_t> remap(static_cast<size_t>(std::max<int64_t>(id_bound, 0)), -1);
  for (size_t i = 0; i < count; ++i) {
    if (i + kNodePrefetch < count) __builtin_prefetch(&model.nodes()[i + kNodePrefetch].stream_id);
    const int64_t s = model.nodes()[i].stream_id;
    if (s >= 0 && s < id_bound) remap[s] = 0;
  }
  int64_t k = 0;
  for (int64_t s = 0; s < id_bound; ++s) {
    if (remap[s] == 0) remap[s] = k++;
  }
  if (k < id_bound) {  // else every id is used and maps to itself
    for (size_t i = 0; i < count; ++i) {
      if (i + kNodePrefetch < count)
        __builtin_prefetch(&model.node(NodeId(static_cast<int32_t>(i + kNodePrefetch))).stream_id);
      Node& n = model.node(NodeId(static_cast<int32_t>(i)));
      if (n.stream_id >= 0 && n.stream_id < id_bound) n.stream_id = remap[n.stream_id];
    }
  }
  if (log != nullptr) log->Record(kName, "StreamsRenumbered", "", Field("before", id_bound), Field("after", k));
  return k;
}

}  // namespace npuplan::stream
