// The B-Tree's bulk calls on a caller's device arrays (btree_map.hpp): the
// same lists, sorts and kernels as a batch of the replay engine, staged
// from device arrays instead of a host batch, with the results narrowed
// into the caller's arrays instead of copied to the host.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "core/btree/detail/btree_impl.cuh"
#include "core/common/cuda_check.hpp"
#include "core/common/errors.hpp"
#include "core/common/grid.cuh"
#include "core/common/width_copy.cuh"

namespace gpudict::btree {

namespace {

// An operations-kernel list's words (OpsRef::op_words) from the staged
// arguments: slot s, the list's one type.
__global__ void op_words_kernel(const uint32_t* args, uint32_t type, unsigned long long* words, uint64_t n) {
  const uint64_t s = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (s < n) words[s] = op_word(static_cast<uint32_t>(s), type, args ? args[s] : 0u);
}

}  // namespace

uint64_t checked_list(uint64_t n, const char* what) {
  if (n >= 0xFFFFFFFFull) throw InputError(std::string("btree_map: ") + what + " of 2^32 - 1 or more keys");
  return n;
}

template <class Word>
SortBits BTree<Word>::domain_sort_bits(uint64_t n) const {
  // Keys anywhere in the domain of the key type: the locality sort's bits
  // for uniform keys there (sort_bits.hpp).
  const Word hi = key_bits_ == 32 ? Word{0xFFFFFFFFu} : key_max<Word>;
  return query_sort_bits_of<Word>(Word{0}, hi, n);
}

template <class Word>
SortBits BTree<Word>::stage_device(const DeviceSource& src, bool with_args, bool with_types) {
  const uint64_t n = src.n;
  reserve_list(n);
  widen_copy<Word>(src.keys, src.key_bytes, src.index, d_keys_[0].data(), n, stream_);
  if (with_args) {
    if (src.args)
      widen_copy<Word>(src.args, src.arg_bytes, src.index, d_args_.data(), n, stream_);
    else
      GPUDICT_CUDA(cudaMemsetAsync(d_args_.data(), 0, n * sizeof(Word), stream_));
  }
  if (with_types) GPUDICT_CUDA(cudaMemsetAsync(d_types_.data(), src.type, n, stream_));
  return domain_sort_bits(n);
}

template <class Word>
SortBits BTree<Word>::stage_ops_device(const DeviceSource& src) {
  const uint64_t n = src.n;
  if (!worded(n)) return stage_device(src, true, true);
  const SortBits bits = stage_device(src, src.args != nullptr, false);
  for (auto& d : d_words_) d.reserve_discard(std::max<uint64_t>(n, 1), "btree operation words");
  if constexpr (sizeof(Word) == 4) {  // (worded(): 32-bit arguments only)
    op_words_kernel<<<blocks_for(n, 256), 256, 0, stream_>>>(src.args ? d_args_.data() : nullptr, src.type,
                                                               d_words_[0].data(), n);
    GPUDICT_CHECK_LAUNCH("op_words_kernel");
  }
  return bits;
}

template <class Word>
void BTree<Word>::build_device(const DeviceSource& pairs) {
  const uint64_t n = checked_list(pairs.n, "a build");
  if (capacity_ == 0) fall_back_to_first_pool();
  require_pool();
  DeviceTime t;
  if (n == 0) {
    reset_empty();
    return;
  }
  Word* vals[2];
  build_buffers(n, vals);
  widen_copy<Word>(pairs.keys, pairs.key_bytes, nullptr, d_keys_[0].data(), n, stream_);
  widen_copy<Word>(pairs.args, pairs.arg_bytes, nullptr, vals[0], n, stream_);
  build_staged(n, t);
  key_lo_ = 0;  // the keys' span is not known on the host (range estimates assume the whole domain)
  key_hi_ = key_bits_ == 32 ? Word{0xFFFFFFFFu} : key_max<Word>;
}

template <class Word>
void BTree<Word>::update_device(const DeviceSource& src) {
  checked_list(src.n, "an update list");
  require_pool();
  if (src.n == 0) return;
  key_lo_ = 0;  // the keys' span is not known on the host
  key_hi_ = key_bits_ == 32 ? Word{0xFFFFFFFFu} : key_max<Word>;
  refresh();
  DeviceTime t;
  if (merges_phased_updates(opt_, src.n, h_hdr_[0].size)) {
    ++merged_update_lists_;
    stage_device(src, true, true);
    merge_staged(src.n, t);
    return;
  }
  ++ops_update_lists_;
  DeviceSource pass = src;
  std::vector<uint32_t> left, positions;  // positions: the array position of each list position (re-runs)
  for (;;) {
    if (run_update_pass(pass.n, pass.type == static_cast<uint8_t>(OpType::Insert) ? pass.n : 0,
                        [&] { return stage_ops_device(pass); }, Phase::Update, t, left))
      return;
    // Map list positions to array positions and gather those on the next pass.
    for (uint32_t& s : left) s = positions.empty() ? s : positions[s];
    positions = left;
    d_rerun_index_.reserve_discard(positions.size(), "btree re-run positions");
    copy_to_device(stream_, d_rerun_index_.data(), positions.data(), positions.size() * sizeof(uint32_t));
    pass.index = d_rerun_index_.data();
    pass.n = positions.size();
  }
}

template <class Word>
void BTree<Word>::query_device(const DeviceSource& src, void* value_out, int value_bytes, void* key_out,
                               int key_bytes, bool* found_out) {
  const uint64_t n = checked_list(src.n, "a query list");
  require_pool();
  if (n == 0) return;
  refresh();
  const OpType type = static_cast<OpType>(src.type);
  if (type != OpType::Lookup && type != OpType::Successor && type != OpType::Count)
    throw InputError("btree_map: query_device serves lookups, successors and counts");
  const bool two_keys = type == OpType::Count;
  const SortBits bits = stage_device(src, two_keys, false);
  double ms = 0.0;
  run_query_list(type, n, bits, two_keys, ms);
  // Results by slot, which is the array position.
  const uint8_t* found = type == OpType::Count ? nullptr : d_found_.data();
  narrow_copy<Word>(d_value_.data(), found, value_out, value_bytes, n, stream_);
  if (type == OpType::Successor) narrow_copy<Word>(d_key_out_.data(), found, key_out, key_bytes, n, stream_);
  if (found) flags_to_bool(found, found_out, n, stream_);
  GPUDICT_CUDA(cudaStreamSynchronize(stream_));
}

template <class Word>
TreeRef<Word> BTree<Word>::device_view() {
  require_pool();
  key_lo_ = 0;  // the caller's kernels may insert anywhere
  key_hi_ = key_bits_ == 32 ? Word{0xFFFFFFFFu} : key_max<Word>;
  return ref();
}

template <class Word>
void BTree<Word>::refresh() {
  sync_header();
  if (h_hdr_[0].overflow) clear_overflow();
}

template <class Word>
void BTree<Word>::reserve_free_nodes(uint64_t nodes) {
  require_pool();
  refresh();
  const uint64_t used = used_nodes();
  if (capacity_ - used >= nodes) return;
  if (used + nodes > 0xFFFFFFF0ull)
    throw RuntimeFailure("btree_map: " + std::to_string(used + nodes) + " nodes exceed the 2^32 - 16 a tree can address");
  grow_pool(std::max<uint64_t>(used + nodes, capacity_ + capacity_ / 2));
}

template class BTree<uint32_t>;
template class BTree<uint64_t>;

}  // namespace gpudict::btree
