// Storage for the vector clocks of the verifier's happens-before sweeps
// (sync_verifier.cc, id_reuse_verifier.cc): clocks of k entries (one per
// stream: hundreds once streams are split), handed out by handle and reused
// once released. Fixed blocks: growing never moves or copies a clock, and
// only as many clocks as are live at once are ever touched.
#ifndef NPUPLAN_VERIFY_CLOCK_STORE_H_
#define NPUPLAN_VERIFY_CLOCK_STORE_H_

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

namespace npuplan::verify {

class ClockStore {
 public:
  explicit ClockStore(size_t k) : k_(std::max<size_t>(k, 1)) {}
  // A clock's handle; its entries are not initialised.
  int32_t Alloc() {
    if (!free_.empty()) {
      const int32_t h = free_.back();
      free_.pop_back();
      return h;
    }
    if (used_ % kBlock == 0) blocks_.emplace_back(new int32_t[kBlock * k_]);
    return used_++;
  }
  int32_t* get(int32_t h) {
    return blocks_[static_cast<size_t>(h) / kBlock].get() + static_cast<size_t>(h) % kBlock * k_;
  }
  void Release(int32_t h) { free_.push_back(h); }

 private:
  static constexpr size_t kBlock = 64;
  size_t k_;
  int32_t used_ = 0;
  std::vector<std::unique_ptr<int32_t[]>> blocks_;
  std::vector<int32_t> free_;
};

}  // namespace npuplan::verify

#endif  // NPUPLAN_VERIFY_CLOCK_STORE_H_
