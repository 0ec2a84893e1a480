// The B-Tree's options as a typed struct: what the library's btree_map and
// the command line's flags both configure (the command line parses its
// flags into this struct; core/ holds no command-line code).
#pragma once

#include <cstdint>

namespace gpudict::btree {

// Phased inserts and deletes: merged into the tree level by level
// (merge_updates.cu), or run by the operations kernel (as concurrent batches
// are). Auto: the thread operations kernel for lists of at most
// kAutoOpsMaxUpdates updates into a tree of at least kAutoOpsTreeRatio times
// as many keys, merged otherwise. Why: the merge pays a sort and a few
// kernels and a host read per tree level whatever the list's length, the
// operations kernel a launch and one descent per update, but its latched
// splits contend where a batch is large against the tree (many inserts per
// leaf). The thresholds come from measurements (docs/results/btree.md).
enum class PhasedUpdates { Auto, Merge, Ops };
inline constexpr uint64_t kAutoOpsMaxUpdates = 1ull << 17;
inline constexpr uint64_t kAutoOpsTreeRatio = 16;

struct Options {
  uint64_t node_pool = 0;  // nodes; 0: automatic (grows between kernels)
  double fill = 0.7;       // bulk build: keys per node = round(fill x 14)
  int tile = 32;           // lanes per operation: 32, 16 or 8
  bool sort = true;        // sort each list of operations by key
  int query_tile = 1;      // phased queries: 1 thread each (lists of long ranges:
                           // lock-step tiles of 4), lock-step tiles of 4 or 8
                           // lanes; 0: the operations kernel
  PhasedUpdates phased_updates = PhasedUpdates::Auto;  // how a phased batch's inserts and deletes run
  bool thread_ops = true;  // the operations kernel of concurrent and ops-updated lists: a thread per operation
                           // (thread_ops_kernel.cuh); false: a tile of --tile lanes per operation (the paper's)
  bool op_words = true;    // those lists carry (slot, type, argument) words through the sort (OpsRef::op_words)
  bool leaf_groups = true;  // the thread kernel's updates: first attempt per leaf, one latch per group of lanes
  bool leaf_directory = true;  // phased point queries find their leaf in the bulk build's leaf directory
};

// Keys (children) per bulk-built leaf (inner node) at a fill.
int leaf_fill(double fill);
int inner_fill(double fill);

// The path phased_updates takes: auto with the tile operations kernel
// always merges (the paper's kernel was not measured on short lists).
inline PhasedUpdates effective_phased_updates(const Options& o) {
  return o.phased_updates == PhasedUpdates::Auto && !o.thread_ops ? PhasedUpdates::Merge : o.phased_updates;
}

// Throws InputError naming the field ("btree options: fill ...") when a
// value is outside its range.
void validate(const Options& o);

}  // namespace gpudict::btree
