// A node as a tile of G cooperating lanes holds it (G = 8, 16 or 32): lane r
// of the tile keeps the node's words r W .. r W + W - 1 (W = 32 / G) in
// registers, so the tile reads or writes the whole node with one coalesced
// access (G = 32: one word per lane, the paper's warp; G = 8: one 16-byte
// vector per lane at u32, two at u64, four tiles per warp). Word: the
// node's word type (node.hpp); the same positions at both widths. Everything here is
// tile-uniform: every lane of the tile calls it with the same arguments.
#pragma once

#include <cooperative_groups.h>

#include <cstdint>

#include "core/btree/detail/node.hpp"

namespace gpudict::btree {

namespace cg = cooperative_groups;

template <unsigned G>
using Tile = cg::thread_block_tile<G>;

template <class Word, unsigned G>
struct Frag {
  static constexpr int W = 32 / G;
  Word w[W];
};

// Word `slot` of the lane's slice, `slot` known only at run time (an
// unrolled select keeps the slice in registers).
template <int W, class Word>
__device__ __forceinline__ Word slot_of(const Word (&w)[W], int slot) {
  Word v = w[0];
#pragma unroll
  for (int s = 1; s < W; ++s)
    if (slot == s) v = w[s];
  return v;
}

// Node word `idx` on every lane of the tile.
template <class Word, unsigned G>
__device__ __forceinline__ Word word_at(const Tile<G>& t, const Frag<Word, G>& f, int idx) {
  constexpr int W = Frag<Word, G>::W;
  return t.shfl(slot_of<W>(f.w, idx % W), idx / W);
}

// Sets node word `idx` (on the lane that holds it).
template <class Word, unsigned G>
__device__ __forceinline__ void set_word(const Tile<G>& t, Frag<Word, G>& f, int idx, same_t<Word> v) {
  constexpr int W = Frag<Word, G>::W;
  if (static_cast<int>(t.thread_rank()) == idx / W) {
#pragma unroll
    for (int s = 0; s < W; ++s)
      if (idx % W == s) f.w[s] = v;
  }
}

template <class Word, unsigned G>
__device__ __forceinline__ Word key_at(const Tile<G>& t, const Frag<Word, G>& f, int i) {
  return word_at(t, f, 2 * i);
}
template <class Word, unsigned G>
__device__ __forceinline__ Word value_at(const Tile<G>& t, const Frag<Word, G>& f, int i) {
  return word_at(t, f, 2 * i + 1);
}

// Number of keys among pairs [0, count) that are <= k (strict: < k). Keys are
// sorted, so this is the upper (lower) bound position of k. One ballot per
// key word a lane holds. TileT: a cooperative-groups tile (Tile<G>) or a
// WarpTile<G> (core/common/warp.cuh), whose ballot runs on the whole warp.
template <class Word, unsigned G, class TileT>
__device__ __forceinline__ int count_keys(const TileT& t, const Frag<Word, G>& f, int count, same_t<Word> k, bool strict) {
  constexpr int W = Frag<Word, G>::W;
  const int r = static_cast<int>(t.thread_rank());
  int c = 0;
  if constexpr (W == 1) {
    const int i = r / 2;
    const bool pred = (r % 2 == 0) && i < count && (strict ? f.w[0] < k : f.w[0] <= k);
    c = __popc(t.ballot(pred));
  } else {
#pragma unroll
    for (int s = 0; s < W; s += 2) {
      const int i = (r * W + s) / 2;
      const bool pred = r * W + s < 2 * kCapacity && i < count && (strict ? f.w[s] < k : f.w[s] <= k);
      c += __popc(t.ballot(pred));
    }
  }
  return c;
}

// Index of the inner-node entry whose child is `child`, or -1.
template <class Word, unsigned G>
__device__ __forceinline__ int find_child(const Tile<G>& t, const Frag<Word, G>& f, int count, uint32_t child) {
  constexpr int W = Frag<Word, G>::W;
  const int r = static_cast<int>(t.thread_rank());
  int best = 64;
#pragma unroll
  for (int s = 0; s < W; ++s) {
    const int idx = r * W + s;
    if (idx % 2 == 1 && idx < 2 * kCapacity && idx / 2 < count && f.w[s] == child) best = min(best, idx / 2);
  }
#pragma unroll
  for (int o = G / 2; o > 0; o >>= 1) best = min(best, t.shfl_xor(best, o));
  return best == 64 ? -1 : best;
}

// out word idx = in word src(idx), src given per lane and slot. Every lane
// takes part (shuffles).
template <class Word, unsigned G>
__device__ __forceinline__ void gather(const Tile<G>& t, const Frag<Word, G>& in, const int (&src)[Frag<Word, G>::W],
                                       Frag<Word, G>& out) {
  constexpr int W = Frag<Word, G>::W;
#pragma unroll
  for (int s = 0; s < W; ++s) {
    Word v = 0;
#pragma unroll
    for (int u = 0; u < W; ++u) {
      const Word x = t.shfl(in.w[u], src[s] / W);
      if (src[s] % W == u) v = x;
    }
    out.w[s] = v;
  }
}

// Pairs [p, count) move one slot up and pair p becomes (k, v); count < kCapacity.
template <class Word, unsigned G>
__device__ __forceinline__ void insert_pair(const Tile<G>& t, Frag<Word, G>& f, int count, int p, same_t<Word> k,
                                            same_t<Word> v) {
  constexpr int W = Frag<Word, G>::W;
  const int r = static_cast<int>(t.thread_rank());
  int src[W];
#pragma unroll
  for (int s = 0; s < W; ++s) {
    const int idx = r * W + s;
    const int i = idx / 2;
    src[s] = (idx < 2 * kCapacity && i > p && i <= count) ? idx - 2 : idx;
  }
  Frag<Word, G> out;
  gather(t, f, src, out);
#pragma unroll
  for (int s = 0; s < W; ++s) {
    const int idx = r * W + s;
    if (idx < 2 * kCapacity && idx / 2 == p) out.w[s] = (idx % 2 == 0) ? k : v;
  }
  f = out;
}

// Pair q leaves; pairs (q, count) move one slot down.
template <class Word, unsigned G>
__device__ __forceinline__ void remove_pair(const Tile<G>& t, Frag<Word, G>& f, int count, int q) {
  constexpr int W = Frag<Word, G>::W;
  const int r = static_cast<int>(t.thread_rank());
  int src[W];
#pragma unroll
  for (int s = 0; s < W; ++s) {
    const int idx = r * W + s;
    const int i = idx / 2;
    src[s] = (idx < 2 * kCapacity && i >= q && i + 1 < count) ? idx + 2 : idx;
  }
  Frag<Word, G> out;
  gather(t, f, src, out);
  f = out;
}

// Pairs [h, count) move to [0, count - h) (the right half of a split); the
// metadata words are left as they were, for the caller to set.
template <class Word, unsigned G>
__device__ __forceinline__ void shift_down(const Tile<G>& t, Frag<Word, G>& f, int count, int h) {
  constexpr int W = Frag<Word, G>::W;
  const int r = static_cast<int>(t.thread_rank());
  int src[W];
#pragma unroll
  for (int s = 0; s < W; ++s) {
    const int idx = r * W + s;
    src[s] = (idx < 2 * (count - h)) ? idx + 2 * h : idx;
  }
  Frag<Word, G> out;
  gather(t, f, src, out);
  f = out;
}

// Sets the value word of pair i.
template <class Word, unsigned G>
__device__ __forceinline__ void set_value(const Tile<G>& t, Frag<Word, G>& f, int i, same_t<Word> v) {
  set_word(t, f, 2 * i + 1, v);
}

}  // namespace gpudict::btree
