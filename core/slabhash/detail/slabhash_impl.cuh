// The slab hash's Dictionary implementation (internal). Its members live in:
//   slabhash.cu   construction, table sizing, build, FLUSH (cleanup and the
//                 --flush-every policy), stats, parameters, the memory bound
//   execute.cu    a batch: staging, the kernels per phase, pool growth and
//                 the re-run of unfinished operations, results
//   inspect.cu    the host-side table checker (inspect.hpp)
// Kernels: batch_kernels*.cu (tile_ops.cuh), flush.cu, build.cu.
// SlabHash<K, V> is instantiated for u32/u32, u32/u64 and u64/u64 (every
// member's definition ends with the instantiations of its file).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/api/dictionary.hpp"
#include "core/common/cub_temp.cuh"
#include "core/common/key_traits.hpp"
#include "core/common/stream_copy.hpp"
#include "core/common/device_buffer.hpp"
#include "core/common/event_timer.hpp"
#include "core/common/pinned_buffer.cuh"
#include "core/common/stream_follow.hpp"
#include "core/slabhash/detail/kernels.cuh"
#include "core/slabhash/options.hpp"
#include "core/slabhash/detail/slab_pool.hpp"
#include "core/slabhash/detail/table_ref.cuh"

namespace gpudict::slabhash {

struct TableCopy;  // inspect.hpp

// Operations of a batch kernel on the device: the batch's staging, or the
// operations a pass runs again.
template <class K, class V>
struct DeviceOps {
  DeviceBuffer<uint8_t> type;
  DeviceBuffer<K> key;
  DeviceBuffer<V> arg;
  DeviceBuffer<uint32_t> idx;
  uint64_t bytes() const { return type.bytes() + key.bytes() + arg.bytes() + idx.bytes(); }
};

// What the checker (inspect.cu) asks of a slab hash of any width.
class SlabHashBase : public Dictionary {
 public:
  virtual TableCopy copy() const = 0;
};

template <class K, class V>
class SlabHash final : public SlabHashBase {
 public:
  SlabHash(int device, const Options& options);
  ~SlabHash() override;
  SlabHash(const SlabHash&) = delete;
  SlabHash& operator=(const SlabHash&) = delete;

  const Capabilities& caps() const override { return caps_; }
  Params parameters() const override;
  uint64_t device_bytes_needed(const WorkloadBounds& b) const override;
  void build(const KeyValues& initial, DeviceTime& t) override;
  void execute(const Batch& batch, BatchResults& r, DeviceTime& t) override;
  void snapshot(const std::string& name, DeviceTime& t) override;
  void drop_snapshot(const std::string& name) override;
  void cleanup(DeviceTime& t) override;
  Stats stats() const override;

  Mode mode() const { return opt_.mode; }
  // inspect.cu: the tests' host copy of the table.
  TableCopy copy() const override;

  // device_api.cu: the library's bulk calls on device arrays
  // (slab_hash_map), on this table's stream; each returns when done.
  // A new table sized for n pairs, then the pairs inserted (map: the later
  // pair of a key wins).
  void build_device(const K* keys, const V* values, uint64_t n);
  // Inserts or deletes n keys as one pass (values: null for deletes).
  void update_device(const K* keys, const V* values, uint64_t n, bool insert);
  // Lookups: values_out[i] (0 when absent), found_out[i]; either may be null.
  void find_device(const K* keys, uint64_t n, V* values_out, bool* found_out);
  // Orders this table's stream after the caller's work queued on `caller`.
  void follow(cudaStream_t caller) { follower_.follow(stream_, caller); }
  uint64_t size() const { return live_; }

  // device_api.cu: what the library's device refs need (slab_hash_ref.cuh).
  // The table as kernels see it (created empty if it was not yet).
  TableRef<K> device_table();
  // Where refs count the slots they claim, the alive bits they clear and
  // the slabs they link (3 counters, zero until refs change something).
  unsigned long long* ref_counts();
  // Folds what refs counted into live_, claimed_ and pool_used_ (a copy to
  // the host, only once a ref was handed out), so that sizes, the FLUSH
  // policy and pool growth see the refs' changes.
  void absorb_ref_counts();
  // Pool growth ahead of `inserts` inserts by refs, whatever
  // options.grow_ahead says.
  void reserve_device(uint64_t inserts);
  // Live keys after the refs' changes.
  uint64_t live_keys() {
    absorb_ref_counts();
    return live_;
  }

 private:
  // One staged pass of operations: the host copies (for re-runs) and where
  // the kernel finds them on the device. Without op_at, a re-run gathers
  // its operations from `in` on the device (in.index and in.type null: an
  // operation's batch position is its position in the arrays).
  struct Staged {
    std::function<void(uint32_t pos, uint8_t& type, K& key, V& arg)> op_at;  // by batch position
    OpsIn<K, V> in;
  };
  uint64_t run_device_pass(const K* keys, const V* values, uint64_t n, uint8_t type, uint32_t ops, Phase phase,
                           DeviceTime& t);

  static int use_device(int device);
  // What a slab holds in this mode at this width (options.hpp).
  SlabShape shape() const;
  // Sizes the buckets for `n` keys (options decide), allocates and clears
  // the base slabs and the pool (outside any timed region).
  void create_table(uint64_t n);
  void ensure_table();
  TableRef<K> ref() const;
  OpsOut<V> outputs(uint64_t batch_size);
  // Zeroes the counters; the range cursor only when `cursor_too` (it spans
  // every pass of a batch).
  void reset_counters(bool cursor_too);
  Counters read_counters();
  // Copies the first m operations of the pinned staging (h_type_, h_key_,
  // h_arg_, h_idx_) into `d`; returns them as kernel input.
  OpsIn<K, V> upload_ops(DeviceOps<K, V>& d, uint64_t m, const char* what);
  // Runs `s.in` (operation types `ops`, bit 1 << type), timed into `phase`; grows the pool or the range buffer and
  // runs the unfinished operations again until none is left. Returns the
  // counters summed over the rounds (and updates live_ and claimed_).
  Counters run_pass(const Staged& s, uint32_t ops, Phase phase, uint64_t batch_size, DeviceTime& t);
  void grow_pool_or_throw(uint32_t unfinished, uint64_t pass_size, DeviceTime& t, Phase phase);
  void grow_range_buffer(unsigned long long needed);
  // Growth ahead of a pass of `inserts` inserts (--pool-growth ahead): while
  // the pool slabs expected after them would pass 3/4 of the pool, add a
  // super block. An almost full pool allocates slowly (long searches for a
  // free bit) and a full one costs a rerun.
  void reserve_for_inserts(uint64_t inserts, DeviceTime& t, Phase phase);
  // The same growth whatever --pool-growth says (slab_hash_map::reserve).
  void grow_ahead_of(uint64_t inserts, DeviceTime& t, Phase phase);
  // FLUSH; returns the device milliseconds.
  double flush();
  void maybe_flush(DeviceTime& t);
  // Tombstones since the last FLUSH or build (claimed slots that are not live).
  uint64_t tombstones() const;
  std::string flush_policy() const;
  void fix_build_duplicates(const K* d_keys, const V* d_values, uint64_t n, DeviceTime& t);
  uint64_t scratch_bytes() const;

  int device_;
  Capabilities caps_;
  Options opt_;
  cudaStream_t stream_ = nullptr;
  EventTimer timer_;

  // The table.
  bool created_ = false;
  uint64_t buckets_ = 0;  // hashed buckets (plus one for key key_max<K>)
  DeviceBuffer<Slab> base_;
  SlabPool pool_;
  UniversalHash hash_;

  // What the host knows about the contents.
  uint64_t live_ = 0;     // alive pairs (keys in map/set mode)
  uint64_t claimed_ = 0;  // claimed slots (alive + tombstones) since the last flush or build
  uint64_t pool_used_ = 0;  // pool slabs in chains (linked by inserts; recounted after a flush)
  uint64_t batches_ = 0;  // batches executed (for messages)
  uint64_t update_batches_since_flush_ = 0;
  uint64_t flushes_ = 0, auto_flushes_ = 0;
  uint64_t growths_ = 0;
  uint64_t unfinished_reruns_ = 0;
  uint64_t build_duplicates_ = 0;
  std::string context_;  // "batch 7" / "the build", for messages
  StreamFollower follower_;  // follow()

  // Device scratch.
  DeviceBuffer<Counters> d_ctr_;
  DeviceBuffer<unsigned long long> d_live_;
  DeviceBuffer<unsigned long long> d_ref_counts_;  // ref_counts(); allocated by the first
  bool refs_issued_ = false;
  DeviceOps<K, V> d_ops_;
  // Re-runs of unfinished operations (the first pass's inputs stay intact).
  DeviceOps<K, V> d_rerun_;
  DeviceBuffer<uint8_t> d_found_;
  DeviceBuffer<V> d_value_;
  DeviceBuffer<uint32_t> d_offset_, d_unfinished_;
  DeviceBuffer<V> d_range_values_;
  CubTemp temp_;

  // Pinned host staging.
  PinnedBuffer<uint8_t> h_type_, h_found_;
  PinnedBuffer<K> h_key_;
  PinnedBuffer<V> h_arg_, h_value_, h_range_;
  PinnedBuffer<uint32_t> h_idx_, h_offset_;
  PinnedBuffer<Counters> h_ctr_;
};

}  // namespace gpudict::slabhash
