// Reading the multiversion B-Tree at a snapshot (versions.hpp): a leaf head
// resolved to its state at stamp s. Used by the snapshot queries, the
// device ref and the structural checks; no writer runs while they read
// (phased queries), so nodes and version words are read through the
// read-only cache.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "core/btree/detail/node.hpp"
#include "core/btree/detail/ops_kernel.cuh"
#include "core/btree/detail/point_kernel.cuh"
#include "core/btree/detail/thread_node.cuh"
#include "core/btree/detail/word_access.cuh"
#include "core/mvbtree/detail/versions.hpp"

namespace gpudict::mvbtree {

template <class Word>
struct VersionsRef {
  btree::TreeRef<Word> tree;  // the heads: the B-Tree's pool
  const VWord* head_v = nullptr;
  const btree::Node<Word>* copies = nullptr;
  const VWord* copy_v = nullptr;
  uint64_t copy_capacity = 0;

  // The words of the state at s of the list whose newest word is v (at
  // `p`): the first version along `older` with stamp <= s. Null: the list
  // ended first, or ran longer than the pools allow (a corrupt list).
  __device__ __forceinline__ const Word* resolve(const Word* p, VWord v, uint32_t s) const {
    for (uint64_t hops = 0; hops <= tree.capacity + copy_capacity; ++hops) {
      if (vstamp(v) <= s) return p;
      const uint32_t o = volder(v), i = o & kOlderIndex;
      if (o & kOlderOrigin) {
        p = tree.words(i);
        v = __ldg(head_v + i);
      } else if (o & kOlderCopy) {
        p = copies[i].w;
        v = __ldg(copy_v + i);
      } else {
        return nullptr;
      }
    }
    return nullptr;
  }
};

// A reader for the B-Tree's descent and walks (point_kernel.cuh:
// descend_to_leaf, walk_range): node `node` whole through the read-only
// cache, a leaf as it was at snapshot s (s = kLatest: the head). Inner
// nodes are never versioned: every snapshot descends the latest ones (a
// leaf head whose range holds k resolves to a state whose range holds k,
// since a leaf's range only shrinks). A list that ends before s sets *bad
// and leaves the head's words (the caller reports an internal error).
template <class Word>
__device__ __forceinline__ auto snapshot_reader(const VersionsRef<Word>& vr, uint32_t s, bool* bad) {
  return [&vr, s, bad](uint32_t node, Word(&w)[btree::kNodeWords], Word& meta) {
    btree::ld_readonly_node(vr.tree.words(node), w);
    meta = w[btree::kMetaWord];
    if (s != kLatest && btree::meta_leaf(meta)) {
      const VWord v = __ldg(vr.head_v + node);
      if (vstamp(v) > s) {
        const Word* p = vr.resolve(vr.tree.words(node), v, s);
        if (!p) {
          *bad = true;
          return false;
        }
        btree::ld_readonly_node(p, w);
        meta = w[btree::kMetaWord];
      }
    }
    return true;
  };
}

// The leaf state at s that holds k, in w / meta (one thread). False: a
// corrupt version list or tree.
template <class Word>
__device__ __forceinline__ bool leaf_at(const VersionsRef<Word>& vr, uint32_t s, Word k,
                                        Word (&w)[btree::kNodeWords], Word& meta) {
  bool bad = false;
  uint32_t leaf;
  return btree::descend_to_leaf(vr.tree, k, w, meta, leaf, snapshot_reader(vr, s, &bad)) && !bad;
}

// Whether k is present at s (hit), its value. False: corrupt, nothing set.
template <class Word>
__device__ __forceinline__ bool find_at(const VersionsRef<Word>& vr, uint32_t s, Word k, bool& hit, Word& value) {
  Word w[btree::kNodeWords], meta;
  if (!leaf_at(vr, s, k, w, meta)) return false;
  int p;
  hit = btree::leaf_find(w, static_cast<int>(btree::meta_count(meta)), k, p, value);
  if (!hit) value = 0;
  return true;
}

// The smallest key above k at s (found), its value (0 and 0 when none).
// False: corrupt, nothing set.
template <class Word>
__device__ __forceinline__ bool successor_at(const VersionsRef<Word>& vr, uint32_t s, Word k, bool& found, Word& key,
                                             Word& value) {
  Word w[btree::kNodeWords], meta;
  if (!leaf_at(vr, s, k, w, meta)) return false;
  bool bad = false;
  const auto read = snapshot_reader(vr, s, &bad);
  for (uint64_t steps = 0; steps <= vr.tree.capacity; ++steps) {
    const int cnt = static_cast<int>(btree::meta_count(meta));
    const int p = btree::keys_below(w, cnt, k, false);
    const Word link = w[btree::kLinkWord];
    if (p < cnt || link == btree::kNil) {  // else every key right of this state is >= its high key > k
      found = p < cnt;
      key = value = 0;
      if (found) btree::pair_of(w, p, key, value);
      return true;
    }
    if (!read(static_cast<uint32_t>(link), w, meta)) return false;
  }
  return false;
}

}  // namespace gpudict::mvbtree
