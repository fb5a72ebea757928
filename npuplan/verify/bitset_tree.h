// A set of integers in [0, n) with successor / predecessor queries, for the
// sweeps over a million buffers that kept a std::set / std::map keyed by
// offset (plan validator, reuse log): flat words instead of a node per key,
// O(log64 n) per operation.
//
//   level 1:  [0 1 ...]            bit w: word w of level 0 is not zero
//   level 0:  [word 0][word 1] ... bit i % 64 of word i / 64: i is in the set
#ifndef NPUPLAN_VERIFY_BITSET_TREE_H_
#define NPUPLAN_VERIFY_BITSET_TREE_H_

#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace npuplan::memory {

class BitsetTree {
 public:
  static constexpr size_t kNone = static_cast<size_t>(-1);

  explicit BitsetTree(size_t n) {
    size_t words = n;
    do {
      words = (words + 63) / 64;
      levels_.emplace_back(words, 0);
    } while (words > 1);
  }

  bool Contains(size_t i) const { return (levels_[0][i >> 6] >> (i & 63)) & 1; }

  void Insert(size_t i) {
    for (std::vector<uint64_t>& words : levels_) {
      const uint64_t before = words[i >> 6];
      words[i >> 6] = before | (uint64_t{1} << (i & 63));
      if (before != 0) return;  // the levels above already say so
      i >>= 6;
    }
  }

  void Erase(size_t i) {
    for (std::vector<uint64_t>& words : levels_) {
      words[i >> 6] &= ~(uint64_t{1} << (i & 63));
      if (words[i >> 6] != 0) return;
      i >>= 6;
    }
  }

  // The smallest element >= i, or kNone.
  size_t Next(size_t i) const {
    size_t level = 0;
    for (;; ++level) {
      if (level == levels_.size()) return kNone;
      const std::vector<uint64_t>& words = levels_[level];
      const size_t w = i >> 6;
      if (w >= words.size()) return kNone;
      const uint64_t bits = words[w] & (~uint64_t{0} << (i & 63));
      if (bits != 0) {
        i = (w << 6) | static_cast<size_t>(std::countr_zero(bits));
        break;
      }
      i = w + 1;  // the next word of this level, as an element of the one above
    }
    for (; level > 0; --level) {
      i = (i << 6) | static_cast<size_t>(std::countr_zero(levels_[level - 1][i]));
    }
    return i;
  }

  // The largest element <= i, or kNone.
  size_t Prev(size_t i) const {
    size_t level = 0;
    for (;; ++level) {
      if (level == levels_.size()) return kNone;
      const std::vector<uint64_t>& words = levels_[level];
      if (words.empty()) return kNone;
      size_t w = i >> 6;
      uint64_t bits = 0;
      if (w >= words.size()) {
        w = words.size() - 1;
        bits = words[w];
      } else {
        bits = words[w] & (~uint64_t{0} >> (63 - (i & 63)));
      }
      if (bits != 0) {
        i = (w << 6) | static_cast<size_t>(63 - std::countl_zero(bits));
        break;
      }
      if (w == 0) return kNone;
      i = w - 1;
    }
    for (; level > 0; --level) {
      i = (i << 6) | static_cast<size_t>(63 - std::countl_zero(levels_[level - 1][i]));
    }
    return i;
  }

 private:
  std::vector<std::vector<uint64_t>> levels_;  // levels_[0]: one bit per element
};

}  // namespace npuplan::memory

#endif  // NPUPLAN_VERIFY_BITSET_TREE_H_
