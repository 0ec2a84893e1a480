// The B-Tree's command-line side: its options as --help shows them, their
// parsing into btree::Options (errors name the flag), and the registry's
// factory. The structure itself (core/btree) knows none of this.
#include <cmath>
#include <string>

#include "core/btree/options.hpp"
#include "core/common/errors.hpp"
#include "workloads/registry/structures.hpp"

namespace gpudict {

namespace {
constexpr const char* kPhasedUpdates[] = {"auto", "merge", "ops"};  // --phased-updates, in the order of PhasedUpdates
}  // namespace

std::vector<OptionSpec> btree_option_specs() {
  const btree::Options d;  // the defaults --help shows
  return {
      {"node-pool",
       "node pool size in nodes (128 bytes with u32 keys and values, 256 with a 64-bit key or value); 0: automatic (sized at the bulk build, grown between kernels when an "
       "update batch could fill it). A fixed pool that fills stops the run (exit 3)",
       std::to_string(d.node_pool), "UINT"},
      {"fill", "bulk build: fraction of the 14 slots of each node filled (keys per leaf, children per inner node)",
       shortest_text(d.fill), "FLOAT:in (0, 1]"},
      {"tile", "lanes that serve one operation together: 32 (a warp, as in the paper), 16, or 8 (a 16-byte slice "
               "each, four operations per warp)",
       std::to_string(d.tile), "{32,16,8}"},
      {"sort", "on: sort every list of operations by key before the tree pass (neighbouring tiles walk the same "
               "paths; each operation starts from the previous one's parent; lookups and successors that use the "
               "leaf directory are never sorted); off: batch order from the root",
       on_off(d.sort), "{on,off}"},
      {"query-tile", "phased queries (lookup, count, range, successor): 1 = one thread per query, each from the "
                     "root (a range counts its keys, then stores them where its block reserved room; a list "
                     "whose ranges are expected to hold more than 48 pairs each on average: tiles of 4 lanes); 4 or 8 = the lock-step kernel with tiles of that many "
                     "lanes (eight or four operations per warp in flight; a sorted list starts each from the previous "
                     "one's leaf or parent); 0 = the operations kernel (--tile lanes, one operation at a time)",
       std::to_string(d.query_tile), "{1,4,8,0}"},
      {"phased-updates",
       "how a phased batch's inserts and deletes run. merge: sorted, routed to their leaves and merged into them, "
       "one thread per touched node, splits carried up level by level (no latches: no query runs meanwhile; of "
       "several updates of one key the last wins); ops: the operations kernel of concurrent batches (--ops-kernel), "
       "with latches (of several updates of one key any one wins); auto: ops for batches of at most 131072 "
       "updates into a tree of at least 16 times as many keys, with --ops-kernel thread (faster there: the merge "
       "costs a few kernels per tree level whatever the batch's size), merge otherwise",
       kPhasedUpdates[static_cast<int>(d.phased_updates)], "{auto,merge,ops}"},
      {"ops-kernel",
       "the kernel of concurrent batches and of --phased-updates ops. thread: one thread per operation (seqlock "
       "reads of whole nodes, a leaf latch per update, leaf splits under a parent with room), its warp taking over "
       "root splits, full parents and lost races; tile: the paper's warp-cooperative kernel, a tile of --tile lanes "
       "serving one operation at a time",
       d.thread_ops ? "thread" : "tile", "{thread,tile}"},
      {"op-words",
       "on: a concurrent or --phased-updates ops list carries each operation's slot, type and argument in one "
       "8-byte word sorted with its key (one coalesced read per operation); off: the kernel reads them by slot "
       "(two random reads; always so for lists of 2^29 operations or more)",
       on_off(d.op_words), "{on,off}"},
      {"leaf-groups",
       "on: in the thread kernel (--ops-kernel thread) the lanes of a warp whose updates fall into one leaf make "
       "their first attempt together, the first of them applying all to its snapshot of the leaf under one latch "
       "(deletes before inserts); off: every lane latches the leaf for its own update",
       on_off(d.leaf_groups), "{on,off}"},
      {"leaf-directory",
       "on: the bulk build also stores its leaves' low keys as a sorted array with a fence index (4 bytes per "
       "leaf), and phased lookups and successors with --query-tile 1 find their leaf there, unsorted, instead "
       "of sorting their list and descending from the root (splits since the build: B-link moves over at most 8 "
       "leaves, then from the root); off: always from the root. Trees grown from empty have no directory",
       on_off(d.leaf_directory), "{on,off}"},
  };
}

std::unique_ptr<Dictionary> make_btree(const StructureConfig& config) {
  return make_btree_dictionary(btree::parse_options(config), config.device, config.key_type, config.value_type);
}

void validate_btree_options(const StructureConfig& config) { (void)btree::parse_options(config); }

std::vector<OptionSpec> mvbtree_option_specs() { return btree_option_specs(); }

std::unique_ptr<Dictionary> make_mvbtree(const StructureConfig& config) {
  mvbtree::Options o;
  o.tree = btree::parse_options(config);
  return make_mvbtree_dictionary(o, config.device, config.key_type, config.value_type);
}

void validate_mvbtree_options(const StructureConfig& config) { (void)btree::parse_options(config); }

namespace btree {

static_assert(kAutoOpsMaxUpdates == 131072 && kAutoOpsTreeRatio == 16,
              "--phased-updates' help says 131072 and 16");

Options parse_options(const StructureConfig& config) {
  Options o;
  auto has = [&](const char* name) { return config.options.count(name) != 0; };
  if (has("node-pool")) {
    o.node_pool = config.get_u64("node-pool");
    if (o.node_pool > 0xFFFFFFF0ull)
      throw InputError("--node-pool: '" + config.get("node-pool") + "' is more than 2^32 - 16 nodes");
  }
  if (has("fill")) {
    const double f = config.get_double("fill");
    if (!std::isfinite(f) || f <= 0.0 || f > 1.0)
      throw InputError("--fill: '" + config.get("fill") + "' is not a fraction in (0, 1]");
    o.fill = f;
  }
  if (has("tile")) {
    const uint64_t t = config.get_u64("tile");
    if (t != 8 && t != 16 && t != 32) throw InputError("--tile: '" + config.get("tile") + "' is not 8, 16 or 32");
    o.tile = static_cast<int>(t);
  }
  if (has("sort")) o.sort = config.get_choice("sort", "on", "off");
  if (has("query-tile")) {
    const uint64_t t = config.get_u64("query-tile");
    if (t != 0 && t != 1 && t != 4 && t != 8)
      throw InputError("--query-tile: '" + config.get("query-tile") + "' is not 0, 1, 4 or 8");
    o.query_tile = static_cast<int>(t);
  }
  if (has("phased-updates"))
    o.phased_updates = static_cast<PhasedUpdates>(
        config.get_one_of("phased-updates", {kPhasedUpdates[0], kPhasedUpdates[1], kPhasedUpdates[2]}));
  if (has("ops-kernel")) o.thread_ops = config.get_choice("ops-kernel", "thread", "tile");
  if (has("op-words")) o.op_words = config.get_choice("op-words", "on", "off");
  if (has("leaf-groups")) o.leaf_groups = config.get_choice("leaf-groups", "on", "off");
  if (has("leaf-directory")) o.leaf_directory = config.get_choice("leaf-directory", "on", "off");
  return o;
}

}  // namespace btree
}  // namespace gpudict
