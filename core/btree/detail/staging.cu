// A caller's device arrays into the tree's lists (DeviceSource): keys,
// arguments and types widened or derived per operation in one pass, which
// also reduces what the host needs to plan the list (Staged): the keys'
// span (the locality sort's bits, sort_bits.hpp), the inserts' span (the
// range estimates' density, ranges.cu) and number (the pool's growth), the
// ranges' number and the types present. The host waits for those few words
// once per list; the engine's host staging knew them for free, a caller's
// device arrays do not. Small update lists skip that wait (stage_source's
// `read`): their plan needs nothing the host cannot bound, and the span of
// the keys ever inserted is kept on the device, where every list widens it,
// and read with the next list's words that are waited for.
#include <cub/block/block_reduce.cuh>

#include <algorithm>
#include <cstdint>

#include "core/btree/detail/btree_impl.cuh"
#include "core/common/cuda_check.hpp"
#include "core/common/errors.hpp"
#include "core/common/grid.cuh"

namespace gpudict::btree {

namespace {

// The reduced words: lows are kept inverted so that every word reduces by
// max (and atomicMax), or by sum and or.
// kSpanNotLo and kSpanHi, after the list's words, are the span of the keys
// ever inserted: not cleared per list (set_key_span).
enum StagedWord { kNotLo, kHi, kNotInsertLo, kInsertHi, kInserts, kRanges, kKinds, kStagedWords };
constexpr int kSpanNotLo = kStagedWords, kSpanHi = kStagedWords + 1, kFactWords = kStagedWords + 2;

struct Facts {
  unsigned long long w[kStagedWords];
};

struct CombineFacts {
  __device__ Facts operator()(const Facts& a, const Facts& b) const {
    Facts r;
    r.w[kNotLo] = a.w[kNotLo] > b.w[kNotLo] ? a.w[kNotLo] : b.w[kNotLo];
    r.w[kHi] = a.w[kHi] > b.w[kHi] ? a.w[kHi] : b.w[kHi];
    r.w[kNotInsertLo] = a.w[kNotInsertLo] > b.w[kNotInsertLo] ? a.w[kNotInsertLo] : b.w[kNotInsertLo];
    r.w[kInsertHi] = a.w[kInsertHi] > b.w[kInsertHi] ? a.w[kInsertHi] : b.w[kInsertHi];
    r.w[kInserts] = a.w[kInserts] + b.w[kInserts];
    r.w[kRanges] = a.w[kRanges] + b.w[kRanges];
    r.w[kKinds] = a.w[kKinds] | b.w[kKinds];
    return r;
  }
};

template <class Word>
__device__ __forceinline__ Word load_word(const void* p, int bytes, uint64_t at) {
  return bytes == 4 ? static_cast<Word>(static_cast<const uint32_t*>(p)[at])
                    : static_cast<Word>(static_cast<const uint64_t*>(p)[at]);
}

constexpr int kStageBlock = 256;
constexpr uint64_t kStageMaxBlocks = 2048;  // a grid-stride loop: one reduction per block, few atomics

template <class Word>
__global__ void __launch_bounds__(kStageBlock)
    stage_source_kernel(DeviceSource src, Word* keys, Word* args, uint8_t* types, unsigned long long* words,
                        unsigned long long* staged) {
  Facts f{};  // inverted lows start at ~max = 0: no key yet
  for (uint64_t i = static_cast<uint64_t>(blockIdx.x) * kStageBlock + threadIdx.x; i < src.n;
       i += static_cast<uint64_t>(gridDim.x) * kStageBlock) {
    const uint64_t at = src.index ? src.index[i] : i;
    const Word k = load_word<Word>(src.keys, src.key_bytes, at);
    const uint8_t t = src.types   ? src.types[at]
                      : src.erase ? static_cast<uint8_t>(src.erase[at] ? OpType::Delete : OpType::Insert)
                                  : src.type;
    Word arg = 0;
    if (t == static_cast<uint8_t>(OpType::Insert))
      arg = src.args ? load_word<Word>(src.args, src.arg_bytes, at) : Word{0};
    else if (t == static_cast<uint8_t>(OpType::Count) || t == static_cast<uint8_t>(OpType::Range))
      arg = src.upper ? load_word<Word>(src.upper, src.upper_bytes, at) : k;
    keys[i] = k;
    if (args) args[i] = arg;
    if (types) types[i] = t;
    if (words) words[i] = op_word(static_cast<uint32_t>(i), t, static_cast<uint32_t>(arg));
    const unsigned long long kw = static_cast<unsigned long long>(k);
    f.w[kNotLo] = max(f.w[kNotLo], ~kw);
    f.w[kHi] = max(f.w[kHi], kw);
    if (t == static_cast<uint8_t>(OpType::Insert)) {
      f.w[kNotInsertLo] = max(f.w[kNotInsertLo], ~kw);
      f.w[kInsertHi] = max(f.w[kInsertHi], kw);
      ++f.w[kInserts];
    }
    f.w[kRanges] += t == static_cast<uint8_t>(OpType::Range);
    f.w[kKinds] |= t < kNumOpTypes ? 1ull << t : static_cast<unsigned long long>(Staged<Word>::kBadType);
  }
  using Reduce = cub::BlockReduce<Facts, kStageBlock>;
  __shared__ typename Reduce::TempStorage tmp;
  const Facts b = Reduce(tmp).Reduce(f, CombineFacts{});
  if (threadIdx.x != 0) return;
  atomicMax(&staged[kNotLo], b.w[kNotLo]);
  atomicMax(&staged[kHi], b.w[kHi]);
  if (b.w[kInserts]) {
    atomicMax(&staged[kNotInsertLo], b.w[kNotInsertLo]);
    atomicMax(&staged[kInsertHi], b.w[kInsertHi]);
    atomicAdd(&staged[kInserts], b.w[kInserts]);
    atomicMax(&staged[kSpanNotLo], b.w[kNotInsertLo]);
    atomicMax(&staged[kSpanHi], b.w[kInsertHi]);
  }
  if (b.w[kRanges]) atomicAdd(&staged[kRanges], b.w[kRanges]);
  atomicOr(&staged[kKinds], b.w[kKinds]);
}

}  // namespace

template <class Word>
void BTree<Word>::reserve_staged_words() {
  if (d_staged_.capacity() >= kFactWords) return;
  d_staged_.reserve_discard(kFactWords, "btree staging counters");
  h_staged_.reserve_discard(kFactWords);
  set_key_span(key_lo_, key_hi_);
}

template <class Word>
void BTree<Word>::set_key_span(Word lo, Word hi) {
  key_lo_ = lo;
  key_hi_ = hi;
  if (d_staged_.capacity() < kFactWords) return;  // reserve_staged_words writes it
  // Inverted low, as the kernel reduces it (lo > hi: no key, both words 0).
  const unsigned long long span[2] = {lo <= hi ? ~static_cast<unsigned long long>(lo) : 0ull,
                                      lo <= hi ? static_cast<unsigned long long>(hi) : 0ull};
  copy_to_device(stream_, d_staged_.data() + kSpanNotLo, span, sizeof span);
}

template <class Word>
Staged<Word> BTree<Word>::stage_source(const DeviceSource& src, Word* keys, Word* args, uint8_t* types,
                                       unsigned long long* words, bool read) {
  Staged<Word> s;
  if (src.n == 0) return s;
  reserve_staged_words();
  GPUDICT_CUDA(cudaMemsetAsync(d_staged_.data(), 0, kStagedWords * sizeof(unsigned long long), stream_));
  const unsigned blocks = static_cast<unsigned>(std::min<uint64_t>(blocks_for(src.n, kStageBlock), kStageMaxBlocks));
  stage_source_kernel<Word><<<blocks, kStageBlock, 0, stream_>>>(src, keys, args, types, words, d_staged_.data());
  GPUDICT_CHECK_LAUNCH("stage_source_kernel");
  if (!read) {
    // What the host can bound without the device: every key of the domain,
    // every operation an insert; the types are derived (inserts, deletes).
    if (src.types) throw InputError("btree_map: internal error: a mixed list's facts must be read");
    s.lo = 0;
    s.hi = key_bits_ == 32 ? Word{0xFFFFFFFFu} : key_max<Word>;
    s.inserts = src.n;
    s.kinds = 1u << static_cast<int>(OpType::Insert) | 1u << static_cast<int>(OpType::Delete);
    return s;
  }
  copy_to_host(stream_, h_staged_.data(), d_staged_.data(), kFactWords * sizeof(unsigned long long));
  const unsigned long long* w = h_staged_.data();
  s.lo = static_cast<Word>(~w[kNotLo]);
  s.hi = static_cast<Word>(w[kHi]);
  s.inserts = w[kInserts];
  s.ranges = w[kRanges];
  s.kinds = static_cast<uint32_t>(w[kKinds]);
  if (s.inserts) {
    s.insert_lo = static_cast<Word>(~w[kNotInsertLo]);
    s.insert_hi = static_cast<Word>(w[kInsertHi]);
  }
  if (w[kSpanNotLo] != 0 || w[kSpanHi] != 0) {  // some key was inserted (the lists unread too)
    key_lo_ = static_cast<Word>(~w[kSpanNotLo]);
    key_hi_ = static_cast<Word>(w[kSpanHi]);
  }
  if (s.kinds & Staged<Word>::kBadType)
    throw InputError("btree_map: an operation code that is no op_code (0 to 5) in a mixed call's ops");
  return s;
}

template <class Word>
Staged<Word> BTree<Word>::stage_list(const DeviceSource& src, bool with_args, bool with_types) {
  reserve_list(src.n);
  return stage_source(src, d_keys_[0].data(), with_args ? d_args_.data() : nullptr,
                      with_types ? d_types_.data() : nullptr, nullptr);
}

template <class Word>
Staged<Word> BTree<Word>::stage_ops_list(const DeviceSource& src, bool with_types, bool read) {
  const uint64_t n = src.n;
  reserve_list(n);
  if (!worded(n)) return stage_source(src, d_keys_[0].data(), d_args_.data(), d_types_.data(), nullptr, read);
  for (auto& d : d_words_) d.reserve_discard(std::max<uint64_t>(n, 1), "btree operation words");
  return stage_source(src, d_keys_[0].data(), nullptr, with_types ? d_types_.data() : nullptr, d_words_[0].data(),
                      read);
}

template class BTree<uint32_t>;
template class BTree<uint64_t>;

}  // namespace gpudict::btree
