// Storage for the vector clocks of the verifier's happens-before sweeps
// (sync_verifier.cc, id_reuse_verifier.cc): clocks of k entries (one per
// stream: hundreds once streams are split), handed out by handle and reused
// once released. Fixed blocks: growing never moves or copies a clock, and
// only as many clocks as are live at once are ever touched.
//
// ClockPool keeps one clock per slot of a sweep, freed after its last reader.
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
  size_t k() const { return k_; }

 private:
  static constexpr size_t kBlock = 64;
  size_t k_;
  int32_t used_ = 0;
  std::vector<std::unique_ptr<int32_t[]>> blocks_;
  std::vector<int32_t> free_;
};

// Clocks by slot, each freed once its readers (counted in refs() before the
// sweep) are done with it.
class ClockPool {
 public:
  ClockPool(size_t slots, size_t k) : store_(k), handle_(slots, -1), refs_(slots, 0) {}
  // Readers of a slot's clock still to come.
  int32_t& refs(int32_t slot) { return refs_[slot]; }
  // A fresh clock for `slot` (entries not initialised).
  int32_t* Alloc(int32_t slot) {
    handle_[slot] = store_.Alloc();
    return get(slot);
  }
  int32_t* get(int32_t slot) { return store_.get(handle_[slot]); }
  // One reader of `slot` is done: the clock is freed after the last.
  void Unref(int32_t slot) {
    if (--refs_[slot] <= 0 && handle_[slot] >= 0) {
      store_.Release(handle_[slot]);
      handle_[slot] = -1;
    }
  }
  // `slot`'s clock, starting as a copy of `from`'s, read once (Unref(from)).
  // When `slot` is the last reader (a stream's next slot, most of the time)
  // it takes over `from`'s clock instead of copying its k entries.
  int32_t* CopyOf(int32_t slot, int32_t from) {
    if (refs_[from] == 1 && handle_[from] >= 0) {
      refs_[from] = 0;
      handle_[slot] = handle_[from];
      handle_[from] = -1;
      return get(slot);
    }
    int32_t* c = Alloc(slot);
    const int32_t* f = get(from);
    std::copy(f, f + store_.k(), c);
    Unref(from);
    return c;
  }
  // Whether `slot` holds a clock.
  bool live(int32_t slot) const { return handle_[slot] >= 0; }

 private:
  ClockStore store_;
  std::vector<int32_t> handle_;
  std::vector<int32_t> refs_;
};

}  // namespace npuplan::verify

#endif  // NPUPLAN_VERIFY_CLOCK_STORE_H_
