// One LSM level on the device, the pool that recycles level storage, the
// level lists (the live structure and every snapshot), and the view that the
// kernels get of a list. Internal to core/lsm.
//
// A level of index i has room for b 2^i elements and holds n of them, 1 <= n
// <= b 2^i (levels are occupied or empty; an occupied one need not be full:
// a batch of k updates writes k elements, never b), structure of arrays:
//   keys     K (u32 or u64), sorted; equal keys adjacent, most recent first
//            (a segment)
//   values   V (u32 or u64; 0 for tombstones)
//   status   u8, bit 0 = tombstone (kTombstone); the key keeps all its bits,
//            so every key of either width is legal
//   fences   the search index above the keys (the sorted array's fence
//            layout, core/sorted_array/detail/layout.cuh, with a top of at most
//            kLevelTopMax keys so that several levels' tops fit in shared
//            memory at once)
//   filter   optional, built by the first lookup batch that visits the
//            level (level_filter.cuh): a blocked Bloom filter per top
//            segment, so a lookup skips a level that cannot hold its key
// A level is immutable once written: merges write a new level and drop the
// old ones, so a level can be shared by the live list and any number of
// snapshots (std::shared_ptr). When the last reference goes, the storage
// returns to the pool (at most one free storage per index) or is freed.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/common/device_buffer.hpp"
#include "core/common/key_traits.hpp"
#include "core/sorted_array/detail/layout.cuh"

namespace gpudict::lsm {

using sa::div_up;
using sa::round_up;

inline constexpr int kMaxLevels = 32;            // level indices 0..31
inline constexpr uint64_t kMaxLevelSize = 1ull << 31;  // positions are u32
inline constexpr uint32_t kLevelTopMax = 1024;   // largest fence top of a level (4 KiB of u32, 8 KiB of u64)
inline constexpr uint8_t kTombstone = 1;         // status bit 0

// The fence layout of a level of n keys: the sorted array's layout with a
// smaller top (at most kLevelTopMax keys).
inline sa::FenceLayout level_layout(uint64_t n) { return sa::FenceLayout::for_size(n, kLevelTopMax); }

// Fence buffer entries a level of n keys needs: the upper levels, and at
// least the level-1 fences a merge writes (ceil(n / 32) entries).
inline uint64_t level_fence_entries(uint64_t n) {
  const sa::FenceLayout f = level_layout(n);
  return std::max<uint64_t>(f.fence_entries, round_up(div_up(n, sa::kFanout), sa::kFanout));
}

// Device bytes of a level of n elements of key type K, value type V.
template <class K, class V>
inline uint64_t level_bytes(uint64_t n) {
  return round_up(n, sa::kFanout) * sizeof(K) + n * sizeof(V) + n + level_fence_entries(n) * sizeof(K);
}

template <class K, class V>
struct Level {
  int index = 0;
  uint64_t capacity = 0;      // b 2^index elements
  sa::ArrayStore<K, V> kv;    // keys, values, fences, n, layout
  DeviceBuffer<uint8_t> status;
  // The lookup filter (level_filter.cuh): allocated and built on demand by a
  // lookup batch, kept with the storage when it is recycled; filter_ready
  // says it describes the current contents (acquire() clears it).
  DeviceBuffer<uint32_t> filter;
  bool filter_ready = false;
  // Written by build() or cleanup(), which lay levels out in disjoint key
  // ranges: a lookup searches at most one of them, so such a level gets no
  // filter (it could save a miss one search and would cost every hit a
  // probe). acquire() clears it.
  bool disjoint = false;
  // Stale records as this level alone shows them: a record after the first
  // of its key (shadowed within the level) or a first record that is a
  // tombstone. Counted by the kernel that writes the level. Every one of them
  // is stale in the whole structure, so the sum over the live levels is a
  // lower bound of the stale count, exact when one level is occupied.
  uint64_t local_stale = 0;
  uint64_t n() const { return kv.n; }
  // Sets the element count (the caller writes them) and the fence layout for
  // it; n <= capacity.
  void set_size(uint64_t n);
  uint64_t bytes() const { return kv.bytes() + status.bytes() + filter.bytes(); }
};

// Free level storage, at most one per index. Shared with the deleters of the
// levels' shared_ptrs (which may outlive a snapshot map entry but never the
// structure: the structure's destructor drops every level before the pool).
template <class K, class V>
class LevelPool : public std::enable_shared_from_this<LevelPool<K, V>> {
 public:
  explicit LevelPool(uint64_t batch_size) : b_(batch_size) {}
  // Storage for a level of index i (contents undefined), pooled or new.
  std::shared_ptr<Level<K, V>> acquire(int index);
  uint64_t bytes() const;
  void clear();

 private:
  struct Recycle {
    std::weak_ptr<LevelPool> pool;
    void operator()(Level<K, V>* l) const;
  };
  void put(Level<K, V>* l);
  uint64_t b_;
  std::array<std::unique_ptr<Level<K, V>>, kMaxLevels> free_{};
};

// A set of occupied levels by index (null = empty), as the live structure or
// a snapshot holds it. r = the binary counter of the levels (bit i set iff
// level i is occupied); the room of the levels is r b elements.
template <class K, class V>
struct LevelList {
  std::array<std::shared_ptr<Level<K, V>>, kMaxLevels> at{};
  uint64_t r = 0;
  int occupied() const {
    int c = 0;
    for (const auto& l : at) c += l ? 1 : 0;
    return c;
  }
  std::string indices() const {  // "0,3,5" ("none" when empty)
    std::string s;
    for (int i = 0; i < kMaxLevels; ++i) {
      if (!at[i]) continue;
      if (!s.empty()) s += ",";
      s += std::to_string(i);
    }
    return s.empty() ? "none" : s;
  }
  uint64_t elements() const {
    uint64_t s = 0;
    for (const auto& l : at) s += l ? l->n() : 0;
    return s;
  }
};

// ---- what kernels see ----

template <class K, class V>
struct LevelView {
  sa::SearchView<K> ix;  // ix.level[0] = keys, ix.size[0] = n
  const V* values;
  const uint8_t* status;
  int32_t smem_off;  // where its fence top sits in the search kernel's shared memory; -1: global
  uint32_t n;
  const uint32_t* filter;     // the lookup filter, or null (not built, or a level without one)
  uint32_t filter_seg_shift;  // log2 of the positions a filter segment covers (the top's stride)
};

// The occupied levels in rank order: rank 0 = the smallest index (the most
// recent data), as lookups visit them.
template <class K, class V>
struct LsmView {
  LevelView<K, V> lv[kMaxLevels];
  int count = 0;
  uint32_t smem_entries = 0;  // shared memory entries of the staged tops
};

// Shared memory budget for staged tops (16 KiB: 4096 u32 keys, 2048 u64
// keys): levels are staged from rank 0 up while they fit; the rest search
// their top in global memory.
template <class K>
inline constexpr uint32_t kStageBudget = 16384 / sizeof(K);

// Whether level index i of the list gets a lookup filter (level_filter.cuh
// says why): a merged level (not disjoint) of more than kLevelTopMax keys
// that is not the list's largest. The one rule for building (Lsm::run_lookups)
// and probing (make_view).
template <class K, class V>
bool wants_lookup_filter(const LevelList<K, V>& list, int i);

// The view of a list; a level's filter is in it when wanted and built.
template <class K, class V>
LsmView<K, V> make_view(const LevelList<K, V>& list);

}  // namespace gpudict::lsm
