// ChunkedStore<T>: an append-only table whose elements never move; the
// Model's node table (NodeStore, graph.h). Elements live in chunks of doubling
// size (16, 32, 64, … elements); growing the table allocates one more chunk
// and never moves an element. Appending to a 1M-node model therefore costs one
// node, not a copy of the whole table into fresh memory (std::vector's growth
// faults in a new copy of every node), and references to nodes stay valid
// while nodes are added. Chunks come from HugePageAllocator (large ones are
// whole transparent huge pages, support/big_vector.h).
//
// Element i lives in chunk k = bit_width(i + 16) - 5 at offset
// i + 16 - 2^(k+4): one count-leading-zeros and two subtractions per access.
// Indexable, iterable (random-access iterators in index order), copyable and
// movable; only appending and clearing change the size.
#ifndef NPUPLAN_IR_CHUNKED_STORE_H_
#define NPUPLAN_IR_CHUNKED_STORE_H_

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <new>
#include <utility>

#include "npuplan/support/big_vector.h"

namespace npuplan {

template <typename T>
class ChunkedStore {
  static constexpr size_t kBaseBits = 4;  // first chunk: 16 elements
  static constexpr size_t kBase = size_t{1} << kBaseBits;
  static constexpr size_t kMaxChunks = 40;  // 16 · (2^40 - 1) elements

 public:
  template <bool kConst>
  class Iter {
   public:
    using iterator_category = std::random_access_iterator_tag;
    using value_type = T;
    using difference_type = std::ptrdiff_t;
    using pointer = std::conditional_t<kConst, const T*, T*>;
    using reference = std::conditional_t<kConst, const T&, T&>;
    using Store = std::conditional_t<kConst, const ChunkedStore, ChunkedStore>;

    Iter() = default;
    Iter(Store* s, size_t i) : s_(s), i_(i) {}
    operator Iter<true>() const { return Iter<true>(s_, i_); }  // NOLINT: iterator → const_iterator
    reference operator*() const { return (*s_)[i_]; }
    pointer operator->() const { return &(*s_)[i_]; }
    reference operator[](difference_type d) const { return (*s_)[i_ + d]; }
    Iter& operator++() { ++i_; return *this; }
    Iter operator++(int) { Iter t = *this; ++i_; return t; }
    Iter& operator--() { --i_; return *this; }
    Iter operator--(int) { Iter t = *this; --i_; return t; }
    Iter& operator+=(difference_type d) { i_ += d; return *this; }
    Iter& operator-=(difference_type d) { i_ -= d; return *this; }
    friend Iter operator+(Iter a, difference_type d) { return a += d; }
    friend Iter operator+(difference_type d, Iter a) { return a += d; }
    friend Iter operator-(Iter a, difference_type d) { return a -= d; }
    friend difference_type operator-(Iter a, Iter b) {
      return static_cast<difference_type>(a.i_) - static_cast<difference_type>(b.i_);
    }
    friend bool operator==(Iter a, Iter b) { return a.i_ == b.i_; }
    friend auto operator<=>(Iter a, Iter b) { return a.i_ <=> b.i_; }

   private:
    Store* s_ = nullptr;
    size_t i_ = 0;
  };
  using value_type = T;
  using size_type = size_t;
  using iterator = Iter<false>;
  using const_iterator = Iter<true>;

  ChunkedStore() = default;
  ChunkedStore(const ChunkedStore& o) {
    try {
      reserve(o.size_);
      for (size_t i = 0; i < o.size_; ++i) push_back(o[i]);
    } catch (...) {
      Release();
      throw;
    }
  }
  ChunkedStore(ChunkedStore&& o) noexcept
      : chunks_(std::exchange(o.chunks_, {})), size_(std::exchange(o.size_, 0)) {}
  ChunkedStore& operator=(const ChunkedStore& o) {
    if (this != &o) {
      ChunkedStore copy(o);
      swap(copy);
    }
    return *this;
  }
  ChunkedStore& operator=(ChunkedStore&& o) noexcept {
    if (this != &o) {
      ChunkedStore gone(std::move(o));
      swap(gone);
    }
    return *this;
  }
  ~ChunkedStore() { Release(); }

  void swap(ChunkedStore& o) noexcept {
    std::swap(chunks_, o.chunks_);
    std::swap(size_, o.size_);
  }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T& operator[](size_t i) { return chunks_[Chunk(i)][Offset(i)]; }
  const T& operator[](size_t i) const { return chunks_[Chunk(i)][Offset(i)]; }
  T& back() { return (*this)[size_ - 1]; }
  const T& back() const { return (*this)[size_ - 1]; }

  iterator begin() { return iterator(this, 0); }
  iterator end() { return iterator(this, size_); }
  const_iterator begin() const { return const_iterator(this, 0); }
  const_iterator end() const { return const_iterator(this, size_); }

  // Allocates the chunks that hold `n` elements (constructs nothing).
  void reserve(size_t n) {
    if (n == 0) return;
    for (size_t k = 0; k <= Chunk(n - 1); ++k) Allocate(k);
  }

  T& push_back(const T& v) { return emplace_back(v); }
  T& push_back(T&& v) { return emplace_back(std::move(v)); }
  template <typename... Args>
  T& emplace_back(Args&&... args) {
    const size_t k = Chunk(size_);
    Allocate(k);
    T* slot = chunks_[k] + Offset(size_);
    ::new (static_cast<void*>(slot)) T(std::forward<Args>(args)...);
    ++size_;
    return *slot;
  }

  void clear() {
    for (size_t i = size_; i > 0; --i) (*this)[i - 1].~T();
    size_ = 0;
  }

 private:
  static size_t Chunk(size_t i) { return static_cast<size_t>(std::bit_width(i + kBase)) - (kBaseBits + 1); }
  static size_t Offset(size_t i) { return i + kBase - (kBase << Chunk(i)); }
  static size_t ChunkSize(size_t k) { return kBase << k; }

  void Allocate(size_t k) {
    if (chunks_[k] != nullptr) return;
    chunks_[k] = HugePageAllocator<T>().allocate(ChunkSize(k));
  }
  void Release() {
    clear();
    for (size_t k = 0; k < kMaxChunks; ++k) {
      if (chunks_[k] != nullptr) HugePageAllocator<T>().deallocate(chunks_[k], ChunkSize(k));
      chunks_[k] = nullptr;
    }
  }

  std::array<T*, kMaxChunks> chunks_{};
  size_t size_ = 0;
};

}  // namespace npuplan

#endif  // NPUPLAN_IR_CHUNKED_STORE_H_
