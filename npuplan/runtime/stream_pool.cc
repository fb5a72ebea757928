#include "npuplan/runtime/stream_pool.h"

#include "absl/strings/str_cat.h"

namespace npuplan::runtime {

namespace {
constexpr internal::PoolNames kStreamNames{
    "StreamPool::AcquireStreams", "streams", "StreamPoolOptions::max_streams",
    " (slot 0, the caller's stream, included; a device has about 2048 streams in all)"};
}  // namespace

absl::StatusOr<std::unique_ptr<StreamPool>> StreamPool::Create(Device& device,
                                                               StreamPoolOptions options,
                                                               StreamRef caller) {
  if (options.max_streams < 1) {
    return absl::InvalidArgumentError(
        "StreamPoolOptions::max_streams must be >= 1 (slot 0 is the caller's stream)");
  }
  return std::unique_ptr<StreamPool>(new StreamPool(device, options, caller));
}

StreamPool::StreamPool(Device& device, StreamPoolOptions options, StreamRef caller)
    : device_(device), options_(options), pool_(1, options.max_streams, kStreamNames) {
  pool_.SetReserved(0, caller);
}

// Grows the pool to n slots with the pool's priority and flags.
absl::StatusOr<std::vector<StreamRef>> StreamPool::AcquireStreams(size_t n) {
  return pool_.Acquire(n,
                       [this] { return CreateStream(device_, options_.priority, options_.flags); });
}

}  // namespace npuplan::runtime
