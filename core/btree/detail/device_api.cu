// The B-Tree's bulk calls on a caller's device arrays (btree_map.hpp):
// lists staged from the arrays (staging.cu), sorted and run by the kernels,
// with the results narrowed into the caller's arrays. Only device work is
// timed (sorts, kernels, pool growth); staging, allocation and the
// narrowing of results are not.
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

uint64_t checked_list(uint64_t n, const char* what) {
  if (n >= 0xFFFFFFFFull) throw InputError(std::string("btree_map: ") + what + " of 2^32 - 1 or more keys");
  return n;
}

template <class Word>
void BTree<Word>::forget_key_span() {
  set_key_span(0, key_bits_ == 32 ? Word{0xFFFFFFFFu} : key_max<Word>);
}

template <class Word>
void BTree<Word>::build_device(const DeviceSource& pairs) {
  const uint64_t n = checked_list(pairs.n, "a build");
  if (capacity_ == 0) fall_back_to_first_pool();  // a build after a failed one tries again
  require_pool();
  if (n == 0) {
    reset_empty();
    return;
  }
  Word* vals[2];
  build_buffers(n, vals);
  set_key_span(key_max<Word>, 0);  // the new contents' span (stage_source widens it)
  stage_source(pairs, d_keys_[0].data(), vals[0], nullptr, nullptr);
  double ms = 0.0;
  build_staged(n, ms);
  add_time(ms);
}

template <class Word>
void BTree<Word>::update_device(const DeviceSource& src) {
  checked_list(src.n, "an update list");
  require_pool();
  if (src.n == 0) return;
  refresh();
  if (merges_phased_updates(opt_, src.n, h_hdr_[0].size)) {
    ++merged_update_lists_;
    const Staged<Word> s = stage_list(src, true, true);
    if (s.has_queries()) throw InputError("btree_map: an update list holds an operation that is no update");
    double ms = 0.0;
    merge_staged(src.n, ms);
    add_time(ms);
    return;
  }
  ++ops_update_lists_;
  add_time(ops_update_passes(src));
}

template <class Word>
double BTree<Word>::ops_update_passes(DeviceSource pass, const Staged<Word>* staged) {
  double ms = 0.0;
  std::vector<uint32_t> left, positions;  // positions: the array position of each list position (re-runs)
  for (;;) {
    // A small list's plan needs none of the device's facts (stage_source):
    // no wait between staging and the kernel.
    const bool read = pass.types != nullptr || pass.n > kUnreadFactsMaxList;
    const Staged<Word> s = staged ? *staged : stage_ops_list(pass, false, read);
    staged = nullptr;
    if (s.has_queries()) throw InputError("btree_map: an update list holds an operation that is no update");
    if (run_update_pass(pass.n, s.inserts, query_sort_bits_of(s.lo, s.hi, pass.n), ms, left)) return ms;
    // List positions -> array positions, gathered on the next pass.
    if (positions.empty() && pass.index) {  // a list of some positions from the start
      positions.resize(pass.n);
      copy_to_host(stream_, positions.data(), pass.index, pass.n * sizeof(uint32_t));
    }
    for (uint32_t& x : left) x = positions.empty() ? x : positions[x];
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
  const OpType type = static_cast<OpType>(src.type);
  if (type != OpType::Lookup && type != OpType::Successor && type != OpType::Count)
    throw InputError("btree_map: query_device serves lookups, successors and counts");
  refresh();
  const bool two_keys = type == OpType::Count;
  const Staged<Word> s = stage_list(src, two_keys, false);
  double ms = 0.0;
  run_query_list(type, n, query_sort_bits_of(s.lo, s.hi, n), two_keys, ms);
  add_time(ms);
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
  forget_key_span();  // the caller's kernels may insert anywhere
  views_out_ = true;
  return ref();
}

template <class Word>
void BTree<Word>::refresh() {
  if (!views_out_) return;
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
