// The multiversion B-Tree behind mvbtree_map (internal; docs/mvbtree.md):
// core/btree's tree, whose nodes are the latest state, with the versions
// of its leaves beside it (versions.hpp) and the live snapshots.
//
// Updates go to the B-Tree's own paths (merged or the operations kernel;
// a mixed call runs its queries, then its updates: mvbtree_map.cu);
// while snapshots are live, each update call is wrapped by the version
// kernels (version_kernels.cuh): before it, the leaves it changes are
// copied where a live snapshot still sees them; after it, the leaves it
// created point at the leaf they split from. Queries at the latest state
// are the B-Tree's, unchanged; queries at a snapshot read the latest inner
// nodes and resolve each leaf to its state at the snapshot's stamp
// (version_ref.cuh). Every call works on the tree's stream and returns
// when it is done.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/btree/detail/btree_impl.cuh"
#include "core/common/device_buffer.hpp"
#include "core/common/event_timer.hpp"
#include "core/common/pinned_buffer.cuh"
#include "core/common/trace_events.hpp"
#include "core/mvbtree/detail/mvbtree_check.hpp"
#include "core/mvbtree/detail/version_kernels.cuh"
#include "core/mvbtree/detail/version_ref.cuh"
#include "core/mvbtree/detail/versions.hpp"
#include "core/mvbtree/options.hpp"

namespace gpudict::mvbtree {

// What the versions hold (mvbtree_map::stats adds the tree's).
struct VersionCounts {
  uint64_t snapshots = 0;        // live
  uint64_t copies = 0;           // leaf states held in the version pool
  uint64_t copy_capacity = 0;    // the version pool's nodes
  uint64_t copies_made = 0;      // since the start
  uint64_t copies_reclaimed = 0;
  uint64_t versioned_leaves = 0;  // heads with an older state
  uint64_t stamp = 0;             // the global stamp: the next snapshot's
  uint64_t renumberings = 0;
  uint64_t version_bytes = 0;     // the versions: a word per node, the version pool (released when empty)
  uint64_t scratch_bytes = 0;     // the calls' claim lists, marks and sorts
};

template <class Word>
class VersionedTree {
 public:
  VersionedTree(int device, const Options& options, int key_bits);
  VersionedTree(const VersionedTree&) = delete;
  VersionedTree& operator=(const VersionedTree&) = delete;

  btree::BTree<Word>& tree() { return tree_; }
  const btree::BTree<Word>& tree() const { return tree_; }
  const Options& options() const { return opt_; }
  cudaStream_t stream() const { return tree_.stream(); }
  void set_timing(device_timing* t) {
    timing_ = t;
    tree_.set_timing(t);
  }

  // A bulk build replaces the contents: refused (InputError) while
  // snapshots are live, since they would read a tree that is gone.
  void build_device(const btree::DeviceSource& pairs);
  // Inserts and deletes (src.types, when given, holds update codes only):
  // the states live snapshots read survive them.
  void update_device(const btree::DeviceSource& src);

  // Takes a snapshot: O(1) (a stamp and an entry in the table of live
  // ones); returns its name.
  std::string take_snapshot();
  // Drops a snapshot: its stamp leaves the table and a sweep returns the
  // leaf states no live snapshot reads to the version pool's free list.
  void drop_snapshot(const std::string& name);
  // The stamp a live snapshot reads at (InputError for an unknown name).
  uint32_t stamp_of(const std::string& name) const;
  // The tree and versions as a kernel reads them.
  VersionsRef<Word> versions_ref() const;
  VersionCounts counts() const;
  // Everything the structural checker reads (mvbtree_check.hpp), copied to the host.
  void dump(VersionDump<Word>& d) const;
  uint64_t device_bytes_needed(const capacity_bounds& b) const;

  // The snapshot queries' scratch (mvbtree_map.cu) and error flag: a
  // kernel that finds a version list ending early raises it; check_error
  // throws RuntimeFailure ("internal error") and clears it.
  unsigned long long* error_flag() { return d_scalars_.data() + kError; }
  void check_error(const char* what);
  void add_time(double ms) const {
    if (timing_) timing_->add(ms);
  }
  EventTimer& timer() { return timer_; }
  CubTemp& cub_temp() { return temp_; }

 private:
  // The version words (and the claim marks, once made) cover the
  // B-Tree's whole pool (grown with it, new words zero).
  void cover_pool();
  // Room in the version pool for `copies` more copies.
  void reserve_copies(uint64_t copies);
  // The sorted live stamps to the device (after take or drop).
  void upload_live();
  // Around an update call while snapshots are live (version_kernels.cuh):
  // lists and version pool sized for a call of n updates into a tree of
  // `leaves` leaves; the claims by descent (before the call) or from the
  // merged path's routing (its leaf_hook), each followed by its copies;
  // after the call, the counts read back (returns the touched leaves) and
  // the new leaves' origins (the nodes the call allocated from first_new on).
  void prepare_claims(uint64_t n, uint64_t leaves);
  ClaimLists claim_lists();
  uint32_t newest_live() const;
  void launch_copies(uint64_t n);
  void claim_by_descent(const btree::DeviceSource& src, double& ms);
  void claim_routed(const uint32_t* leaves, uint64_t n);
  uint64_t settle_claims();
  void finish_update(uint64_t touched, uint64_t first_new, double& ms);
  // Runs `call` (the B-Tree's update; `merged`: it will merge) wrapped by the version kernels.
  template <class Call>
  void versioned_update(const btree::DeviceSource& src, bool merged, Call call);
  void sweep();
  void renumber();
  static UpdateSource update_source(const btree::DeviceSource& src);

  Options opt_;
  btree::BTree<Word> tree_;
  device_timing* timing_ = nullptr;
  EventTimer timer_;
  CubTemp temp_;
  TraceEvents trace_;  // GPUDICT_TRACE=1: a versioned update's steps on stderr

  DeviceBuffer<VWord> head_v_;        // per node of the B-Tree's pool
  DeviceBuffer<uint32_t> mark_;       // per node: the last call that claimed it (claims by descent only)
  DeviceBuffer<btree::Node<Word>> copies_;
  DeviceBuffer<VWord> copy_v_;
  DeviceBuffer<uint32_t> free_;       // free copy slots
  uint64_t covered_ = 0;              // nodes head_v_ (and mark_, once made) cover
  uint64_t copy_cursor_ = 0, free_count_ = 0;
  uint32_t call_ = 0;                 // update calls that claimed (mark_'s values)

  // A call's claim lists (ClaimLists), by operation.
  DeviceBuffer<uint32_t> touched_, copy_of_;
  DeviceBuffer<VWord> touched_old_;
  // The touched leaves' low keys, sorted with their indices (origin_kernel).
  DeviceBuffer<Word> low_[2];
  DeviceBuffer<uint32_t> low_ids_;

  // [kTouched], [kCopies]: a claim's counts; [kVersioned]: heads with an
  // older state; [kFreed]: the free list's length in a sweep; [kError].
  static constexpr int kTouched = 0, kCopies = 1, kVersioned = 2, kFreed = 3, kError = 4, kScalars = 5;
  DeviceBuffer<unsigned long long> d_scalars_;
  PinnedBuffer<unsigned long long> h_scalars_;
  void read_scalars();

  uint64_t stamp_ = 1;                      // the next snapshot's; a write while snapshots live takes it
  std::map<std::string, uint32_t> live_;    // name -> stamp
  uint64_t next_name_ = 0;
  DeviceBuffer<uint32_t> d_live_;           // the live stamps, sorted
  uint64_t copies_made_ = 0, copies_reclaimed_ = 0, renumberings_ = 0;
};

}  // namespace gpudict::mvbtree
