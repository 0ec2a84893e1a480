// The cleanup's fused merge and compaction (cleanup_tiles.cu): every record
// of every level is read twice (a counting pass, key and status: 5 B; a
// placing pass, keys and values: 8 B) and every kept record written once,
// straight into its new level; between them, a 2-byte staging slot per kept
// record (in lists of room for every slot of every tile). No merged run is
// materialised. (Bytes for u32/u32; sizeof(K) + 1 and sizeof(K) + sizeof(V)
// at other widths.)
//
// The merged order of all levels is (key, level rank, position): rank 0 is
// the newest level, so a key's records come newest first, as in a stable
// merge with the newer run first. The cleanup keeps the first record of each
// key in that order unless it is a tombstone.
//
// Tiles: every level gets a splitter at positions S, 2S, ... (not at 0). A
// splitter is the record (key, rank, position); sorted, the splitters cut the
// merged order into pieces, and k consecutive pieces make a tile (every k-th
// splitter starts one). A piece holds at most S records of each level (its
// slice of a level lies between two consecutive splitters of that level), a
// tile at most sum over levels of min(S, level size) + (k - 1) S, and S is
// the largest with that bound <= the tile capacity; a tile holds about k S
// records (k / (k + L - 1) of the capacity). Splitters are records, not
// keys, so a tile boundary may fall inside a run of equal keys, and a run
// longer than a tile spans tiles.
// partition: per splitter and level, the level's bound (its records before
//   the splitter) and the splitter's rank among all splitters (a sum over
//   levels); splitter k j - 1 writes tile j's boundary row: bounds[j L + level].
// count: per tile, the slices are staged in shared memory, the records of
//   every slice but the largest find their merged slot by binary searches in
//   the other slices (the largest slice's records fill the free slots in
//   order), each merged slot is kept or not by comparing with the slot before
//   it (for the tile's first slot: the records just before the tile in each
//   level); the pass stores the tile's kept count and the kept records'
//   staging slots in merged order.
// place: after a scan of the counts, per tile, the slices' keys and values
//   are staged again (same layout) and each kept record is written at its
//   final slot, from the list: no merge a second time.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "core/lsm/detail/level.cuh"

namespace gpudict::lsm {

// The occupied levels a cleanup reads, in rank order (rank 0 = the smallest
// index = the newest data).
template <class K, class V>
struct CleanupSource {
  int count = 0;
  const K* keys[kMaxLevels] = {};
  const V* values[kMaxLevels] = {};
  const uint8_t* status[kMaxLevels] = {};
};

// The same levels' fence indexes (rank order): the partition's searches
// (level 0 of each is the level's keys).
template <class K>
struct CleanupIndex {
  sa::SearchView<K> ix[kMaxLevels] = {};
};

// The tiling of the merged order (host-side; passed to kernels by value).
struct CleanupPlan {
  int levels = 0;
  uint32_t slots = 0;                               // staged records per tile (of the (K, V) planned for)
  uint32_t spacing = 1;                             // S: a splitter every S positions of every level
  uint64_t first_splitter[kMaxLevels + 1] = {};     // splitters of the levels before, by rank
  uint64_t splitters = 0;
  uint64_t tiles = 1;                               // splitters / k + 1 (k = kTileGroup splitters per tile, cleanup_tiles.cu)
  uint64_t bound_entries() const { return (tiles + 1) * static_cast<uint64_t>(levels); }
};

// The plan for levels of these sizes (rank order, each >= 1), with the tile
// size of the pair (K, V): the kernels of that pair only take it.
template <class K, class V>
CleanupPlan plan_cleanup(const uint64_t* sizes, int count);

// Device bytes of a cleanup's tile scratch (bounds, tile counts and offsets,
// the kept lists).
uint64_t cleanup_scratch_bytes(const CleanupPlan& plan);

// The new levels in index order: slot p of the compacted run lies in the
// level k with start[k] <= p < start[k] + n[k].
template <class K, class V>
struct CleanupTargets {
  int count = 0;
  uint64_t start[kMaxLevels] = {};
  uint64_t n[kMaxLevels] = {};
  K* keys[kMaxLevels] = {};
  V* values[kMaxLevels] = {};
  uint8_t* status[kMaxLevels] = {};
  K* fences[kMaxLevels] = {};  // level-1 fences: fences[o / 32] = keys[o]
};

// bounds: plan.bound_entries() u32; row t = each level's first position in tile t.
template <class K>
void cleanup_partition(const CleanupIndex<K>& index, const CleanupPlan& plan, uint32_t* bounds, cudaStream_t stream);

// The count pass's list of kept records for the place pass: per tile and
// warp, the staging slots of the records it keeps, in merged order, and how
// many (u16 entries, cleanup_kept_entries of them).
uint64_t cleanup_kept_entries(const CleanupPlan& plan);

// tile_count[t] = the records tile t keeps (t < plan.tiles); kept: their list.
template <class K, class V>
void cleanup_count(const CleanupSource<K, V>& src, const CleanupPlan& plan, const uint32_t* bounds,
                   uint64_t* tile_count, uint16_t* kept, cudaStream_t stream);

// Writes the u kept records (tile t's from slot tile_offset[t]) into the new
// levels (which hold exactly u elements together) and every level's level-1
// fences (the fence levels above are the caller's).
template <class K, class V>
void cleanup_place(const CleanupSource<K, V>& src, const CleanupPlan& plan, const uint32_t* bounds,
                   const uint64_t* tile_offset, const uint16_t* kept, const CleanupTargets<K, V>& out, uint64_t u,
                   cudaStream_t stream);

}  // namespace gpudict::lsm
