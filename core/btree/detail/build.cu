// build(): the bulk build of the GPU B-Tree paper (s. 4.1.1), bottom-up. The
// pairs are sorted and deduplicated (the later pair of a key wins), the
// tree's shape follows from the key count alone (level sizes, nodes split
// evenly so each holds floor or ceil of its share, at most round(fill x 14)),
// and two kernels write every node directly: one for the leaves, one for all
// inner levels. A node's low key, pivots and high key are the first keys of
// the leaves below (0 for each level's leftmost node, so keys below the
// current minimum still route), computed from the sorted keys by index
// arithmetic.
// Node writes: a tile of 8 lanes per node, four words each (one 16-byte
// store at u32, two at u64).
#include <algorithm>
#include <cstdint>

#include "core/btree/detail/btree_impl.cuh"
#include "core/common/cuda_check.hpp"
#include "core/common/errors.hpp"
#include "core/common/grid.cuh"
#include "core/common/sort_pairs_unique.cuh"

namespace gpudict::btree {

namespace {

// Index of the first leaf under node i of `level`.
__device__ __forceinline__ uint64_t first_leaf(const LevelPlan& p, int level, uint64_t i) {
  for (int l = level; l > 0; --l) i = i * p.size[l - 1] / p.size[l];
  return i;
}

// Low key of node i of `level`: the first key of its first leaf; 0 for the
// leftmost node of every level.
template <class Word>
__device__ __forceinline__ Word low_of(const LevelPlan& p, const Word* keys, int level, uint64_t i) {
  const uint64_t leaf = first_leaf(p, level, i);
  return leaf == 0 ? Word{0} : keys[leaf * p.keys / p.size[0]];
}

// Words 4 r .. 4 r + 3 of a node (v.x .. v.w) from lane r of its tile of 8.
template <class Word>
struct Quad {
  Word x = 0, y = 0, z = 0, w = 0;
};
template <class Word>
__device__ __forceinline__ void store_quad(Node<Word>* node, uint32_t r, const Quad<Word>& v) {
  if constexpr (sizeof(Word) == 4) {
    reinterpret_cast<uint4*>(node->w)[r] = make_uint4(v.x, v.y, v.z, v.w);
  } else {
    ulonglong2* q = reinterpret_cast<ulonglong2*>(node->w) + 2 * r;
    q[0] = make_ulonglong2(v.x, v.y);
    q[1] = make_ulonglong2(v.z, v.w);
  }
}

template <class Word>
__global__ void build_leaves_kernel(const Word* __restrict__ keys, const Word* __restrict__ values,
                                    LevelPlan p, Node<Word>* __restrict__ nodes) {
  const uint64_t g = (static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 8;
  const uint32_t r = threadIdx.x & 7;
  const uint64_t L = p.size[0];
  if (g >= L) return;
  const uint64_t s = g * p.keys / L, e = (g + 1) * p.keys / L;
  const uint32_t cnt = static_cast<uint32_t>(e - s);
  Quad<Word> v;
  if (r < 7) {
    const uint32_t p0 = 2 * r, p1 = 2 * r + 1;
    if (p0 < cnt) {
      v.x = keys[s + p0];
      v.y = values[s + p0];
    }
    if (p1 < cnt) {
      v.z = keys[s + p1];
      v.w = values[s + p1];
    }
  } else {
    const bool last = g + 1 == L;
    v.x = last ? Word{0} : keys[e];              // high key
    v.y = last ? kNil : p.id(0, g + 1);          // link
    v.z = g == 0 ? Word{0} : keys[s];            // low key
    v.w = meta_new<Word>(cnt, true);
  }
  store_quad(&nodes[p.id(0, g)], r, v);
}

// Every inner node of every level (tile g -> level and index).
template <class Word>
__global__ void build_inner_kernel(const Word* __restrict__ keys, LevelPlan p, uint64_t inner_nodes,
                                   Node<Word>* __restrict__ nodes) {
  uint64_t g = (static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 8;
  const uint32_t r = threadIdx.x & 7;
  if (g >= inner_nodes) return;
  int level = 1;
  while (g >= p.size[level]) {
    g -= p.size[level];
    ++level;
  }
  const uint64_t M = p.size[level], N = p.size[level - 1];
  const uint64_t c0 = g * N / M, c1 = (g + 1) * N / M;
  const uint32_t cnt = static_cast<uint32_t>(c1 - c0);
  Quad<Word> v;
  if (r < 7) {
    const uint64_t a = c0 + 2 * r, b = c0 + 2 * r + 1;
    if (a < c1) {
      v.x = low_of(p, keys, level - 1, a);
      v.y = p.id(level - 1, a);
    }
    if (b < c1) {
      v.z = low_of(p, keys, level - 1, b);
      v.w = p.id(level - 1, b);
    }
  } else {
    const bool last = g + 1 == M;
    v.x = last ? Word{0} : low_of(p, keys, level, g + 1);
    v.y = last ? kNil : p.id(level, g + 1);
    v.z = low_of(p, keys, level, g);
    v.w = meta_new<Word>(cnt, false);
  }
  store_quad(&nodes[p.id(level, g)], r, v);
}

}  // namespace

template <class Word>
void BTree<Word>::build_buffers(uint64_t n, Word* vals[2]) {
  // The values sort in the slot buffers, as words: a 64-bit word takes two
  // of their 32-bit entries (cudaMalloc's alignment suits either).
  constexpr uint64_t kSlotsPerWord = sizeof(Word) / sizeof(uint32_t);
  for (int i = 0; i < 2; ++i) {
    d_keys_[i].reserve_discard(n, "btree build keys");
    d_perm_[i].reserve_discard(n * kSlotsPerWord, "btree build values");
    vals[i] = reinterpret_cast<Word*>(d_perm_[i].data());
  }
}

template <class Word>
void BTree<Word>::build_staged(uint64_t n, double& total_ms) {
  dir_.clear();  // the old tree's leaves
  Word* vals[2];
  build_buffers(n, vals);
  double ms = 0.0;
  cub::DoubleBuffer<Word> keys(d_keys_[0].data(), d_keys_[1].data());
  cub::DoubleBuffer<Word> values(vals[0], vals[1]);
  const uint64_t u = sort_pairs_keep_last(temp_, keys, values, n, d_scalars_.data(), h_u64_.data(), timer_, stream_,
                                          &ms);

  const LevelPlan plan = plan_levels(u, leaf_fill(opt_.fill), inner_fill(opt_.fill));
  if (opt_.node_pool != 0) {
    if (plan.total > capacity_) throw_pool_full("the bulk build of " + std::to_string(u) + " keys (" +
                                                std::to_string(plan.total) + " nodes)");
  } else {
    const uint64_t want = plan.total + plan.total / 4 + 1024;
    if (want > capacity_ || want * 4 < capacity_) {  // a new tree: no content to keep
      pool_.release();
      capacity_ = 0;
      try {
        pool_ = allocate_nodes(want, "the bulk build of " + std::to_string(u) + " keys");
      } catch (const DeviceOutOfMemory&) {
        fall_back_to_first_pool();  // the old contents are gone: an empty tree, usable after the error
        throw;
      }
      capacity_ = want;
    }
  }
  uint64_t inner = 0;
  for (int l = 1; l < plan.levels; ++l) inner += plan.size[l];
  // The leaf directory's room, before any node is written.
  const bool directory = use_directory() && plan.levels >= 2 && dir_.reserve(plan.size[0]);

  timer_.start(stream_);
  build_leaves_kernel<<<blocks_for(plan.size[0] * 8, 256), 256, 0, stream_>>>(keys.Current(), values.Current(), plan,
                                                                              pool_.data());
  GPUDICT_CHECK_LAUNCH("build_leaves_kernel");
  if (inner) {
    build_inner_kernel<<<blocks_for(inner * 8, 256), 256, 0, stream_>>>(keys.Current(), plan, inner, pool_.data());
    GPUDICT_CHECK_LAUNCH("build_inner_kernel");
  }
  if constexpr (sizeof(Word) == 4) {  // (use_directory(): 32-bit trees only)
    if (directory) dir_.build(pool_.data(), plan.id(0, 0), stream_);
  }
  ms += timer_.stop(stream_);

  TreeHeader& h = h_hdr_[0];
  h = fresh_header();
  h.next_free = plan.total;
  h.size = u;
  h.leaves = plan.size[0];
  h.height = static_cast<unsigned long long>(plan.levels);
  GPUDICT_CUDA(cudaMemcpyAsync(hdr_.data(), &h, sizeof(TreeHeader), cudaMemcpyHostToDevice, stream_));
  GPUDICT_CUDA(cudaStreamSynchronize(stream_));
  total_ms += ms;
}

template class BTree<uint32_t>;
template class BTree<uint64_t>;

}  // namespace gpudict::btree
