#include "npuplan/runtime/reusable_stream_pool.h"

#include <limits>
#include <string>

#include "absl/strings/str_cat.h"

namespace npuplan::runtime {

// Work deferred until mu_ is released: observer calls and stream destruction
// (which drains the stream's queue and must not block other pool users).
struct ReusableStreamPool::Pending {
  std::vector<ResourceInfo> acquired;
  std::vector<ResourceInfo> released;
  std::vector<Stream> to_destroy;
};

ReusableStreamPool::ReusableStreamPool(Device& device, ReusableStreamPoolOptions options)
    : device_(device), options_(std::move(options)) {}

ReusableStreamPool::~ReusableStreamPool() {
  Pending pending;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& [id, entry] : streams_) {
      for (const auto& [model, tasks] : entry.models) {
        pending.released.push_back(ResourceInfo{ResourceKind::kStream, id, model});
      }
      pending.to_destroy.push_back(std::move(entry.handle));
    }
    streams_.clear();
    by_key_.clear();
    by_model_.clear();
  }
  Finish(pending);
}

// Runs the deferred observer calls, then destroys the released streams.
void ReusableStreamPool::Finish(Pending& pending) {
  if (options_.observer) {
    for (const ResourceInfo& e : pending.released) options_.observer->on_release(e);
    for (const ResourceInfo& e : pending.acquired) options_.observer->on_acquire(e);
  }
  pending.to_destroy.clear();
}

absl::StatusOr<StreamRef> ReusableStreamPool::GetOrCreateStream(ModelId model, int32_t priority,
                                                                uint32_t flags, uint64_t task_num) {
  Pending pending;
  StreamRef chosen;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const Key key{priority, flags};
    const std::set<uint64_t>* held = nullptr;
    if (auto m = by_model_.find(model); m != by_model_.end()) held = &m->second;

    // 1-2. Closest load among streams of this key the model does not hold.
    uint64_t best_id = 0;
    uint64_t best_distance = std::numeric_limits<uint64_t>::max();
    if (auto k = by_key_.find(key); k != by_key_.end()) {
      for (const auto& [load, id] : k->second) {  // ascending (load, id): ties resolved
        if (held != nullptr && held->count(id) > 0) continue;
        if (options_.max_tasks_per_stream != 0 &&
            (task_num > options_.max_tasks_per_stream ||
             load > options_.max_tasks_per_stream - task_num)) {
          continue;
        }
        const uint64_t distance = load > task_num ? load - task_num : task_num - load;
        if (distance < best_distance) {
          best_distance = distance;
          best_id = id;
        }
      }
    }

    // 3. Nothing to share: create.
    if (best_id == 0) {
      if (options_.max_streams != 0 && streams_.size() >= options_.max_streams) {
        return absl::ResourceExhaustedError(
            absl::StrCat("ReusableStreamPool::GetOrCreateStream(model ", model, ", priority ",
                         priority, ", flags ", flags,
                         "): no shareable stream and the pool already holds ", options_.max_streams,
                         " streams; raise ReusableStreamPoolOptions::max_streams to allow more"));
      }
      absl::StatusOr<Stream> created = CreateStream(device_, priority, flags);
      if (!created.ok()) {
        return absl::Status(created.status().code(),
                            absl::StrCat("ReusableStreamPool::GetOrCreateStream(model ", model,
                                         "): ", created.status().message()));
      }
      best_id = created->get().id;
      Entry entry;
      entry.handle = *std::move(created);
      entry.key = key;
      streams_.emplace(best_id, std::move(entry));
      by_key_[key].emplace(0, best_id);
    }

    // Bind.
    Entry& entry = streams_.at(best_id);
    auto& index = by_key_.at(key);
    index.erase({entry.load, best_id});
    entry.load += task_num;
    entry.models.emplace(model, task_num);
    index.emplace(entry.load, best_id);
    by_model_[model].insert(best_id);
    chosen = entry.handle.get();
    pending.acquired.push_back(ResourceInfo{ResourceKind::kStream, best_id, model});
  }
  Finish(pending);
  return chosen;
}

void ReusableStreamPool::UnbindLocked(std::map<uint64_t, Entry>::iterator it, ModelId model,
                                      Pending& pending) {
  Entry& entry = it->second;
  const uint64_t id = it->first;
  auto m = entry.models.find(model);
  auto& index = by_key_.at(entry.key);
  index.erase({entry.load, id});
  entry.load -= m->second;
  entry.models.erase(m);
  pending.released.push_back(ResourceInfo{ResourceKind::kStream, id, model});
  if (entry.models.empty()) {
    if (index.empty()) by_key_.erase(entry.key);
    pending.to_destroy.push_back(std::move(entry.handle));
    streams_.erase(it);
  } else {
    index.emplace(entry.load, id);
  }
}

absl::Status ReusableStreamPool::ReleaseStream(ModelId model, StreamRef stream) {
  Pending pending;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto m = by_model_.find(model);
    if (m == by_model_.end() || m->second.count(stream.id) == 0) {
      return absl::NotFoundError(absl::StrCat("ReusableStreamPool::ReleaseStream: model ", model,
                                              " does not hold stream ", stream.id,
                                              " (never acquired, released, or force-destroyed)"));
    }
    m->second.erase(stream.id);
    if (m->second.empty()) by_model_.erase(m);
    UnbindLocked(streams_.find(stream.id), model, pending);
  }
  Finish(pending);
  return absl::OkStatus();
}

absl::Status ReusableStreamPool::ReleaseModel(ModelId model) {
  Pending pending;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto m = by_model_.find(model);
    if (m == by_model_.end()) return absl::OkStatus();
    for (uint64_t id : m->second) UnbindLocked(streams_.find(id), model, pending);
    by_model_.erase(m);
  }
  Finish(pending);
  return absl::OkStatus();
}

absl::Status ReusableStreamPool::DestroyStream(StreamRef stream, bool force) {
  Pending pending;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = streams_.find(stream.id);
    if (it == streams_.end()) {
      return absl::NotFoundError(absl::StrCat("ReusableStreamPool::DestroyStream: stream ",
                                              stream.id, " is not in the pool"));
    }
    Entry& entry = it->second;
    if (!force && !entry.models.empty()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "ReusableStreamPool::DestroyStream: stream ", stream.id, " is still held by ",
          entry.models.size(), " model(s) (first: ", entry.models.begin()->first,
          "); release it or pass force=true"));
    }
    for (const auto& [model, tasks] : entry.models) {
      auto m = by_model_.find(model);
      m->second.erase(stream.id);
      if (m->second.empty()) by_model_.erase(m);
      pending.released.push_back(ResourceInfo{ResourceKind::kStream, stream.id, model});
    }
    auto& index = by_key_.at(entry.key);
    index.erase({entry.load, stream.id});
    if (index.empty()) by_key_.erase(entry.key);
    pending.to_destroy.push_back(std::move(entry.handle));
    streams_.erase(it);
  }
  Finish(pending);
  return absl::OkStatus();
}

size_t ReusableStreamPool::stream_count() const {
  std::lock_guard<std::mutex> lock(mu_);
  return streams_.size();
}

std::vector<ReusableStreamPool::StreamStatus> ReusableStreamPool::Snapshot() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<StreamStatus> out;
  out.reserve(streams_.size());
  for (const auto& [id, entry] : streams_) {
    StreamStatus s;
    s.stream = entry.handle.get();
    s.priority = entry.key.first;
    s.flags = entry.key.second;
    s.load = entry.load;
    for (const auto& [model, tasks] : entry.models) s.models.push_back(model);
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace npuplan::runtime
