// Storage for the vector clocks of the verifier's happens-before sweeps
// (sync_verifier.cc, id_reuse_verifier.cc): clocks of k entries (one per
// stream: hundreds once streams are split), handed out by handle and reused
// once released. Fixed blocks: growing never moves or copies a clock, and
// only as many clocks as are live at once are ever touched.
//
// ClockPool keeps one clock per slot of a sweep, freed after its last reader,
// its entries in chunks shared copy-on-write.
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
// sweep) are done with it. A clock is a row of chunks of kChunk entries,
// shared between clocks copy-on-write: a slot's clock is most often its
// stream predecessor's with one entry changed, and a clock kept for a later
// reader (an event's sender) then costs one chunk instead of k entries —
// hundreds of streams and tens of thousands of pending senders at 1M nodes.
// A join skips the chunks both clocks share and takes over a chunk the other
// clock dominates. Entries read as the flat clocks' would (clock_store_test).
class ClockPool {
 public:
  static constexpr size_t kChunk = 32;
  ClockPool(size_t slots, size_t k)
      : k_(std::max<size_t>(k, 1)),
        rows_((k_ + kChunk - 1) / kChunk),
        chunks_(kChunk),
        handle_(slots, -1),
        refs_(slots, 0) {
    unset_ = NewChunk();
    std::fill(chunks_.get(unset_), chunks_.get(unset_) + kChunk, -1);
  }
  // Readers of a slot's clock still to come.
  int32_t& refs(int32_t slot) { return refs_[slot]; }
  // A fresh clock for `slot`, every entry -1.
  void Fresh(int32_t slot) {
    const int32_t h = rows_.Alloc();
    handle_[slot] = h;
    int32_t* row = rows_.get(h);
    std::fill(row, row + rows_.k(), unset_);
    chunk_refs_[unset_] += static_cast<int32_t>(rows_.k());
  }
  // `slot`'s clock, starting as a copy of `from`'s, read once (Unref(from)).
  // When `slot` is the last reader (a stream's next slot, most of the time)
  // it takes over `from`'s clock.
  void CopyOf(int32_t slot, int32_t from) {
    if (refs_[from] == 1 && handle_[from] >= 0) {
      refs_[from] = 0;
      handle_[slot] = handle_[from];
      handle_[from] = -1;
      return;
    }
    const int32_t h = rows_.Alloc();
    handle_[slot] = h;
    const int32_t* f = rows_.get(handle_[from]);
    int32_t* row = rows_.get(h);
    for (size_t i = 0; i < rows_.k(); ++i) {
      row[i] = f[i];
      ++chunk_refs_[f[i]];
    }
    Unref(from);
  }
  // `slot`'s clock becomes its entrywise maximum with `from`'s.
  void Join(int32_t slot, int32_t from) {
    int32_t* row = rows_.get(handle_[slot]);
    const int32_t* other = rows_.get(handle_[from]);
    for (size_t i = 0; i < rows_.k(); ++i) {
      if (row[i] == other[i]) continue;
      const int32_t* a = chunks_.get(row[i]);
      const int32_t* b = chunks_.get(other[i]);
      bool a_more = false, b_more = false;
      for (size_t j = 0; j < kChunk; ++j) {
        a_more |= a[j] > b[j];
        b_more |= b[j] > a[j];
      }
      if (!b_more) continue;
      if (!a_more) {  // the other chunk dominates: share it
        ++chunk_refs_[other[i]];
        DropChunk(row[i]);
        row[i] = other[i];
        continue;
      }
      int32_t* w = Writable(row[i]);
      for (size_t j = 0; j < kChunk; ++j) w[j] = std::max(w[j], b[j]);
    }
  }
  // `slot`'s clock, starting as the flat clock `flat` (k entries).
  void FromFlat(int32_t slot, const int32_t* flat) {
    Fresh(slot);
    JoinFlat(slot, flat);
  }
  // `slot`'s clock becomes its entrywise maximum with the flat clock `flat`.
  void JoinFlat(int32_t slot, const int32_t* flat) {
    int32_t* row = rows_.get(handle_[slot]);
    for (size_t i = 0; i < rows_.k(); ++i) {
      const int32_t* a = chunks_.get(row[i]);
      const size_t n = std::min(kChunk, k_ - i * kChunk);
      bool b_more = false;
      for (size_t j = 0; j < n; ++j) b_more |= flat[i * kChunk + j] > a[j];
      if (!b_more) continue;
      int32_t* w = Writable(row[i]);
      for (size_t j = 0; j < n; ++j) w[j] = std::max(w[j], flat[i * kChunk + j]);
    }
  }
  // Copies `slot`'s clock into `out` (k entries).
  void ReadInto(int32_t slot, int32_t* out) {
    const int32_t* row = rows_.get(handle_[slot]);
    for (size_t i = 0; i < rows_.k(); ++i) {
      const int32_t* c = chunks_.get(row[i]);
      std::copy_n(c, std::min(kChunk, k_ - i * kChunk), out + i * kChunk);
    }
  }
  // Entry x of `slot`'s clock.
  int32_t Get(int32_t slot, size_t x) {
    return chunks_.get(rows_.get(handle_[slot])[x / kChunk])[x % kChunk];
  }
  void Set(int32_t slot, size_t x, int32_t v) {
    int32_t& h = rows_.get(handle_[slot])[x / kChunk];
    if (chunks_.get(h)[x % kChunk] == v) return;
    Writable(h)[x % kChunk] = v;
  }
  // One reader of `slot` is done: the clock is freed after the last.
  void Unref(int32_t slot) {
    if (--refs_[slot] <= 0 && handle_[slot] >= 0) {
      const int32_t* row = rows_.get(handle_[slot]);
      for (size_t i = 0; i < rows_.k(); ++i) DropChunk(row[i]);
      rows_.Release(handle_[slot]);
      handle_[slot] = -1;
    }
  }
  // Whether `slot` holds a clock.
  bool live(int32_t slot) const { return handle_[slot] >= 0; }
  size_t k() const { return k_; }

 private:
  int32_t NewChunk() {
    const int32_t c = chunks_.Alloc();
    if (static_cast<size_t>(c) >= chunk_refs_.size()) chunk_refs_.resize(c + 1, 0);
    chunk_refs_[c] = 1;
    return c;
  }
  void DropChunk(int32_t c) {
    if (--chunk_refs_[c] == 0) chunks_.Release(c);
  }
  // Chunk `h` (a clock's row entry), copied first when other clocks share it.
  int32_t* Writable(int32_t& h) {
    if (chunk_refs_[h] == 1) return chunks_.get(h);
    const int32_t c = NewChunk();
    const int32_t* from = chunks_.get(h);
    std::copy(from, from + kChunk, chunks_.get(c));
    --chunk_refs_[h];  // still shared: never the last reference
    h = c;
    return chunks_.get(c);
  }

  size_t k_;
  ClockStore rows_;    // per clock: its chunks' handles
  ClockStore chunks_;  // kChunk entries each
  std::vector<int32_t> chunk_refs_;
  int32_t unset_ = -1;  // the all -1 chunk (one reference of its own: never freed)
  std::vector<int32_t> handle_;
  std::vector<int32_t> refs_;
};

}  // namespace npuplan::verify

#endif  // NPUPLAN_VERIFY_CLOCK_STORE_H_
