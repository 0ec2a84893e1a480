// Queries at a snapshot (mvbtree_map's container_snapshot): one thread per
// query, from the root, through the latest inner nodes to a leaf head
// resolved to its state at the snapshot's stamp (version_ref.cuh), then
// rightwards leaf by leaf, each resolved again. Nothing writes the tree or
// its versions while they run (the container's calls are ordered on the
// tree's stream), so every read goes through the read-only cache. Results
// go straight to the caller's arrays, in their widths.
#pragma once

#include <cub/device/device_scan.cuh>
#include <cuda_runtime.h>

#include <cstdint>

#include "core/btree/detail/point_kernel.cuh"
#include "core/btree/detail/thread_node.cuh"
#include "core/common/cuda_check.hpp"
#include "core/common/device_buffer.hpp"
#include "core/common/grid.cuh"
#include "core/common/stream_copy.hpp"
#include "core/mvbtree/detail/version_ref.cuh"
#include "core/mvbtree/detail/versioned_tree.cuh"

namespace gpudict::mvbtree {

namespace snapshot_detail {

using btree::kNodeWords;

// From the leaf state (w, meta) that holds lo, rightwards: visit(w, a, b)
// for each state's keys [a, b) within [lo, hi], until a state's high key
// passes hi. Each next leaf starts at the previous state's high key (its
// low key), so every key is visited once. False: a read failed.
template <class Word, class Read, class Visit>
__device__ __forceinline__ bool walk_at(const VersionsRef<Word>& vr, Word lo, Word hi, Word (&w)[kNodeWords],
                                        Word meta, Read read, Visit visit) {
  for (uint64_t steps = 0; steps <= vr.tree.capacity; ++steps) {
    const int cnt = static_cast<int>(btree::meta_count(meta));
    const int a = btree::keys_below(w, cnt, lo, true), b = btree::keys_below(w, cnt, hi, false);
    visit(w, a, b);
    const Word link = w[btree::kLinkWord];
    if (link == btree::kNil || hi < w[btree::kHighWord]) return true;
    if (!read(static_cast<uint32_t>(link), w, meta)) return false;
  }
  return false;
}

template <class Word, class Key, class Value>
__global__ void __launch_bounds__(256) find_kernel(VersionsRef<Word> vr, uint32_t s, const Key* keys, uint64_t n,
                                                   Value* values_out, bool* found_out, unsigned long long* error) {
  const uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  bool hit;
  Word v;
  if (!find_at(vr, s, static_cast<Word>(keys[i]), hit, v)) {
    atomicExch(error, 1ull);
    return;
  }
  if (values_out) values_out[i] = static_cast<Value>(v);
  if (found_out) found_out[i] = hit;
}

template <class Word, class Key, class Value>
__global__ void __launch_bounds__(256) successor_kernel(VersionsRef<Word> vr, uint32_t s, const Key* keys, uint64_t n,
                                                        Key* keys_out, Value* values_out, bool* found_out,
                                                        unsigned long long* error) {
  const uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  bool found;
  Word key, value;
  if (!successor_at(vr, s, static_cast<Word>(keys[i]), found, key, value)) {
    atomicExch(error, 1ull);
    return;
  }
  if (keys_out) keys_out[i] = static_cast<Key>(key);
  if (values_out) values_out[i] = static_cast<Value>(value);
  if (found_out) found_out[i] = found;
}

// Counts (sizes[i] = keys in [lo[i], hi[i]]); with `offsets`, the pairs too,
// at offsets[i] of keys_out / values_out (either may be null).
template <class Word, class Key, class Value>
__global__ void __launch_bounds__(256) range_kernel(VersionsRef<Word> vr, uint32_t s, const Key* lo, const Key* hi,
                                                    uint64_t n, unsigned long long* sizes,
                                                    const unsigned long long* offsets, Key* keys_out,
                                                    Value* values_out, unsigned long long* error) {
  const uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const Word a = lo[i], b = hi[i];
  if (a > b) {
    if (sizes) sizes[i] = 0;
    return;
  }
  bool bad = false;
  const auto read = snapshot_reader(vr, s, &bad);
  Word w[kNodeWords], meta;
  if (!leaf_at(vr, s, a, w, meta)) {
    atomicExch(error, 1ull);
    return;
  }
  uint64_t total = 0;
  const uint64_t base = offsets ? offsets[i] : 0;
  const bool ok = walk_at(vr, a, b, w, meta, read, [&](const Word(&x)[kNodeWords], int from, int to) {
    if (offsets) {
#pragma unroll
      for (int q = 0; q < btree::kCapacity; ++q) {
        if (q >= from && q < to) {
          const uint64_t pos = base + total + static_cast<uint64_t>(q - from);
          if (keys_out) keys_out[pos] = static_cast<Key>(x[2 * q]);
          if (values_out) values_out[pos] = static_cast<Value>(x[2 * q + 1]);
        }
      }
    }
    total += static_cast<uint64_t>(to > from ? to - from : 0);
  });
  if (!ok) {
    atomicExch(error, 1ull);
    return;
  }
  if (sizes) sizes[i] = total;
}

}  // namespace snapshot_detail

// Each runs on the tree's stream, adds its device time and returns when
// its results are written; InputError-free (the caller checked the name).
template <class Word, class Key, class Value>
void snapshot_find(VersionedTree<Word>& vt, uint32_t s, const Key* keys, uint64_t n, Value* values_out,
                   bool* found_out) {
  if (n == 0) return;
  const cudaStream_t st = vt.stream();
  vt.timer().start(st);
  snapshot_detail::find_kernel<Word, Key, Value><<<blocks_for(n, 256), 256, 0, st>>>(
      vt.versions_ref(), s, keys, n, values_out, found_out, vt.error_flag());
  GPUDICT_CHECK_LAUNCH("mvbtree snapshot find_kernel");
  vt.add_time(vt.timer().stop(st));
  vt.check_error("a snapshot find");
}

template <class Word, class Key, class Value>
void snapshot_successor(VersionedTree<Word>& vt, uint32_t s, const Key* keys, uint64_t n, Key* keys_out,
                        Value* values_out, bool* found_out) {
  if (n == 0) return;
  const cudaStream_t st = vt.stream();
  vt.timer().start(st);
  snapshot_detail::successor_kernel<Word, Key, Value><<<blocks_for(n, 256), 256, 0, st>>>(
      vt.versions_ref(), s, keys, n, keys_out, values_out, found_out, vt.error_flag());
  GPUDICT_CHECK_LAUNCH("mvbtree snapshot successor_kernel");
  vt.add_time(vt.timer().stop(st));
  vt.check_error("a snapshot successor");
}

template <class Word, class Key>
void snapshot_count(VersionedTree<Word>& vt, uint32_t s, const Key* lo, const Key* hi, uint64_t n,
                    unsigned long long* counts_out) {
  if (n == 0) return;
  const cudaStream_t st = vt.stream();
  vt.timer().start(st);
  snapshot_detail::range_kernel<Word, Key, Key><<<blocks_for(n, 256), 256, 0, st>>>(
      vt.versions_ref(), s, lo, hi, n, counts_out, nullptr, nullptr, nullptr, vt.error_flag());
  GPUDICT_CHECK_LAUNCH("mvbtree snapshot count kernel");
  vt.add_time(vt.timer().stop(st));
  vt.check_error("a snapshot count");
}

// Ranges: their sizes, offsets (n + 1 entries into offsets_out, or the
// scratch when it is null) by an exclusive sum, and, when the total fits
// `capacity`, their pairs. Returns the total.
template <class Word, class Key, class Value>
uint64_t snapshot_range(VersionedTree<Word>& vt, DeviceBuffer<unsigned long long>& sizes,
                        DeviceBuffer<unsigned long long>& offsets, uint32_t s, const Key* lo, const Key* hi,
                        uint64_t n, unsigned long long* offsets_out, Key* keys_out, Value* values_out,
                        uint64_t capacity) {
  const cudaStream_t st = vt.stream();
  unsigned long long total = 0;
  if (n == 0) {
    if (offsets_out) copy_to_device(st, offsets_out, &total, sizeof total);
    return 0;
  }
  sizes.reserve_discard(n + 1, "mvbtree range scratch");
  unsigned long long* off = offsets_out;
  if (!off) {
    offsets.reserve_discard(n + 1, "mvbtree range scratch");
    off = offsets.data();
  }
  unsigned long long* sz = sizes.data();
  vt.cub_temp().reserve(vt.cub_temp().query("mvbtree range offsets", [&](void* p, size_t& bytes) {
    return cub::DeviceScan::ExclusiveSum(p, bytes, sz, off, static_cast<int64_t>(n + 1), st);
  }));
  const auto ref = vt.versions_ref();
  vt.timer().start(st);
  GPUDICT_CUDA(cudaMemsetAsync(sz + n, 0, sizeof(unsigned long long), st));
  snapshot_detail::range_kernel<Word, Key, Value><<<blocks_for(n, 256), 256, 0, st>>>(
      ref, s, lo, hi, n, sz, nullptr, nullptr, nullptr, vt.error_flag());
  GPUDICT_CHECK_LAUNCH("mvbtree snapshot range count kernel");
  vt.cub_temp().run("mvbtree range offsets", [&](void* p, size_t& bytes) {
    return cub::DeviceScan::ExclusiveSum(p, bytes, sz, off, static_cast<int64_t>(n + 1), st);
  });
  double ms = vt.timer().stop(st);
  copy_to_host(st, &total, off + n, sizeof total);
  if (total > 0 && total <= capacity && (keys_out || values_out)) {
    vt.timer().start(st);
    snapshot_detail::range_kernel<Word, Key, Value><<<blocks_for(n, 256), 256, 0, st>>>(
        ref, s, lo, hi, n, nullptr, off, keys_out, values_out, vt.error_flag());
    GPUDICT_CHECK_LAUNCH("mvbtree snapshot range kernel");
    ms += vt.timer().stop(st);
  }
  vt.add_time(ms);
  vt.check_error("a snapshot range");
  return total;
}

}  // namespace gpudict::mvbtree
