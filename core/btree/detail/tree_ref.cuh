// The device view of a B-Tree (trivially copyable, passed to kernels by
// value): the node pool, its capacity and the header counters, with the
// tile-level node accesses and the latch protocol.
//
// Why each fence and each coherent access (PTX memory model; the GPU B-Tree
// paper s. 4, Awad's dissertation ch. 2):
//
// * Readers take no latch. A node is read as a seqlock: every lane loads the
//   meta word with ld.acquire (V1), then its slice of the node with
//   ld.relaxed, then runs fence.acq_rel, then loads the meta word again (V2).
//   The snapshot is used only when, on every lane, V1 == V2, V1 is not
//   latched, and every lane saw the same V1. Why this is enough:
//     - a writer's stores that the slice could show come after the writer's
//       latch (CAS, then a fence on each writing lane). If the slice shows one,
//       the writer's (fence; store) and the reader's (load; fence) synchronise,
//       so the CAS happens before V2: V2 is latched or newer than V1 -> retry;
//     - the acquire on V1 makes every store released before V1 was written
//       visible to the slice load, so the slice is not older than V1.
//   So an accepted snapshot is exactly the node at version V1: no torn read
//   (a node access is not single-copy atomic across lanes), no key seen
//   twice or missed while a writer shifts pairs. The relaxed (.gpu) loads
//   also never hit a stale L1 line.
// * Writers: lane 0 takes the latch with a CAS from the version it read
//   (so a successful CAS also proves the node is unchanged since that
//   snapshot), a tile barrier, and fence.acq_rel on every lane before its
//   stores (so no reader can see a store of ours without also seeing the
//   latch, see above). latch_wait, whose caller then reads the node under
//   the latch, first fences lane 0 (acquire: the previous holder's stores
//   are visible before that read); try_latch writes from its snapshot and
//   needs no acquire (see after_latch).
//   Release: every lane stores its slice (st.relaxed) and fences, the tile
//   syncs, lane 0 stores the new meta word with st.release (version + 1,
//   latch clear): whoever acquires that version sees the whole new node.
// * 64-bit words (trees with a 64-bit key or value): the same protocol and
//   the same fences; the meta word is one aligned 8-byte word, loaded,
//   CASed and released by single 8-byte accesses, which are single-copy
//   atomic (word_access.cuh), so V1 and V2 are whole versions, and a lane's
//   slice is loaded as aligned 8-byte elements (their atomicity is not
//   needed: V1 == V2 excludes any concurrent store).
// * Queries of phased batches run in their own kernel, after the update
//   kernel has finished; nothing writes the nodes meanwhile, so they read
//   through the read-only cache with no fence (read_plain).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "core/btree/detail/node.hpp"
#include "core/btree/detail/tile_node.cuh"
#include "core/btree/detail/word_access.cuh"

namespace gpudict::btree {

// Latch waits and read retries of one operation before it gives up and
// reports an internal error (a hang would need a lost release: a bug).
inline constexpr uint32_t kSpinLimit = 1u << 24;

template <class Word>
struct TreeRef {
  Node<Word>* nodes = nullptr;
  TreeHeader* hdr = nullptr;
  uint64_t capacity = 0;  // nodes in the pool

  __device__ __forceinline__ Word* words(uint32_t node) const { return nodes[node].w; }

  // Phased queries: no writer runs concurrently (see above).
  template <unsigned G>
  __device__ __forceinline__ void read_plain(const Tile<G>& t, uint32_t node, Frag<Word, G>& f, Word& meta) const {
    constexpr int W = Frag<Word, G>::W;
    // 32 / G words per lane in one vector load: the tile reads its line in one instruction.
    ld_readonly_vec_w<W>(words(node) + t.thread_rank() * W, f.w);
    meta = word_at(t, f, kMetaWord);
  }

  // One seqlock read attempt (see above); false: retry.
  template <unsigned G>
  __device__ __forceinline__ bool try_read(const Tile<G>& t, uint32_t node, Frag<Word, G>& f, Word& meta) const {
    constexpr int W = Frag<Word, G>::W;
    Word* p = words(node);
    const Word v1 = ld_acquire_w(p + kMetaWord);
    ld_relaxed_vec_w<W>(p + t.thread_rank() * W, f.w);
    fence_acq_rel_gpu();  // orders the slice load before the second meta load
    const Word v2 = ld_relaxed_w(p + kMetaWord);
    const Word v1_lane0 = t.shfl(v1, 0);
    meta = v1_lane0;
    return t.all(v1 == v2 && v1 == v1_lane0 && !meta_latched(v1));
  }

  // Seqlock read, retried while a writer holds the node (readers wait only
  // for a writer that is inside the node, never for one another).
  template <unsigned G>
  __device__ __forceinline__ bool read_validated(const Tile<G>& t, uint32_t node, Frag<Word, G>& f, Word& meta) const {
    for (uint32_t spin = 0; spin < kSpinLimit; ++spin) {
      if (try_read(t, node, f, meta)) return true;
      // Back off (32 ns doubling to 2 us): a node a writer holds is often
      // wanted by many tiles at once (the root, a hot leaf).
      if (spin > 2) __nanosleep(32u << min(spin - 2, 6u));
    }
    report_error(t);
    return false;
  }

  // Read of a node this tile holds latched: nobody else writes it, and the
  // latch acquisition already ordered these loads after the previous
  // holder's release.
  template <unsigned G>
  __device__ __forceinline__ void read_owned(const Tile<G>& t, uint32_t node, Frag<Word, G>& f) const {
    constexpr int W = Frag<Word, G>::W;
    ld_relaxed_vec_w<W>(words(node) + t.thread_rank() * W, f.w);
  }

  // After lane 0's CAS succeeded: see the protocol above. `acquire`: the
  // tile will read the node under the latch (latch_wait), so lane 0 first
  // makes the previous holder's stores visible. try_latch needs no acquire:
  // it writes from a snapshot whose meta word every lane loaded with
  // ld.acquire (or that this tile wrote itself), and the CAS proves nobody
  // latched the node since, so every earlier store to it is already ordered
  // before ours.
  template <unsigned G>
  __device__ __forceinline__ void after_latch(const Tile<G>& t, bool acquire) const {
    if (acquire && t.thread_rank() == 0) fence_acq_rel_gpu();  // acquire: the previous holder's stores
    t.sync();
    fence_acq_rel_gpu();  // our stores after the latch, on every lane
  }

  // Latch `node` if its meta word still equals `seen` (the unlatched meta of
  // the snapshot the caller holds). Success proves the snapshot is current.
  template <unsigned G>
  __device__ __forceinline__ bool try_latch(const Tile<G>& t, uint32_t node, Word seen) const {
    uint32_t ok = 0;
    if (t.thread_rank() == 0) ok = cas_w(words(node) + kMetaWord, seen, static_cast<Word>(seen | kLatchBit)) == seen;
    ok = t.shfl(ok, 0);
    if (ok) after_latch(t, false);
    return ok != 0;
  }

  // Latch `node`, waiting for the current holder (the paper spins here only
  // for a parent during a split). Returns the latched meta word; false after
  // kSpinLimit attempts (internal error reported).
  template <unsigned G>
  __device__ __forceinline__ bool latch_wait(const Tile<G>& t, uint32_t node, Word& latched_meta) const {
    uint32_t got = 0;
    Word m = 0;
    if (t.thread_rank() == 0) {
      Word* mp = words(node) + kMetaWord;
      for (uint32_t spin = 0; spin < kSpinLimit; ++spin) {
        m = ld_relaxed_w(mp);
        if (!meta_latched(m) && cas_w(mp, m, static_cast<Word>(m | kLatchBit)) == m) {
          got = 1;
          break;
        }
        __nanosleep(32);
      }
    }
    got = t.shfl(got, 0);
    latched_meta = t.shfl(m, 0) | kLatchBit;
    if (!got) {
      report_error(t);
      return false;
    }
    after_latch(t, true);
    return true;
  }

  // Writes the tile's node image (its meta word must still be the latched
  // value, so the latch stays set until release).
  template <unsigned G>
  __device__ __forceinline__ void store(const Tile<G>& t, uint32_t node, const Frag<Word, G>& f) const {
    constexpr int W = Frag<Word, G>::W;
    st_relaxed_vec_w<W>(words(node) + t.thread_rank() * W, f.w);
  }

  // Publishes the node: the new meta word (version + 1, unlatched) after all
  // of the tile's stores to it and to any node written before it.
  template <unsigned G>
  __device__ __forceinline__ void release(const Tile<G>& t, uint32_t node, Word new_meta) const {
    fence_acq_rel_gpu();  // every lane: its stores before the release below
    t.sync();
    if (t.thread_rank() == 0) st_release_w(words(node) + kMetaWord, new_meta);
  }

  // Releases a latched node without changing it (the version still moves on,
  // which only makes concurrent readers retry once).
  template <unsigned G>
  __device__ __forceinline__ void unlatch(const Tile<G>& t, uint32_t node, Word latched_meta) const {
    release(t, node, meta_release(latched_meta, meta_count(latched_meta), meta_leaf(latched_meta)));
  }

  // `n` consecutive fresh nodes; kNil (and the overflow flag set) when the
  // pool has no room. Never indexes past the pool.
  template <unsigned G>
  __device__ __forceinline__ uint32_t allocate(const Tile<G>& t, uint32_t n) const {
    unsigned long long first = 0;
    if (t.thread_rank() == 0) {
      first = atomicAdd(&hdr->next_free, static_cast<unsigned long long>(n));
      if (first + n > capacity) atomicExch(&hdr->overflow, 1ull);
    }
    first = t.shfl(first, 0);
    return first + n > capacity ? kNil : static_cast<uint32_t>(first);
  }

  template <unsigned G>
  __device__ __forceinline__ void report_error(const Tile<G>& t) const {
    if (t.thread_rank() == 0) atomicExch(&hdr->error, 1ull);
  }
};

}  // namespace gpudict::btree
