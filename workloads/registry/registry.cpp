// The structure table. Adding a structure = one entry here, its command-line
// side in workloads/registry/<structure>_options.cpp, plus its module in core/.
#include <cerrno>
#include <cstdio>
#include <cstdlib>

#include "workloads/registry/registry.hpp"

#include "core/common/errors.hpp"
#include "workloads/registry/structures.hpp"

namespace gpudict {

std::string shortest_text(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", x);
  return buf;
}

namespace {

std::vector<StructureInfo> make_table() {
  std::vector<StructureInfo> t;
  t.push_back({"sorted-array",
               "GPU sorted array: the baseline (bulk build by radix sort, batched merge updates)",
               "One sorted array of key-value pairs on the device. Updates of a batch are sorted and merged into "
               "the array in one pass (several updates of one key in a phased batch: the last one wins); lookups "
               "use a cached fence index, count/range/successor are batched searches. Snapshots are device copies "
               "(O(n)). Concurrent batches run as their updates, then their queries.",
               sorted_array_caps(),
               {},
               [](const StructureConfig& cfg) { return make_sorted_array(cfg); }});
  t.push_back({"lsm", "GPU LSM (Ashkiani et al., IPDPS 2018): levels of sorted arrays, tombstones, cleanup, O(levels) snapshots",
               "Levels of sorted arrays with room for b, 2b, 4b, ... elements; a batch of updates is sorted and merged "
               "into level 0 when it fits, otherwise down through the occupied levels (a binary counter); a batch of "
               "k keys stores k elements. Deletes insert tombstones; lookups search from the most recent level; "
               "count and range gather, sort and validate candidates; `cleanup` steps, --cleanup-every and "
               "--cleanup-stale-fraction (by default when half the stored elements are stale) drop stale elements. Several updates of one key in a "
               "batch: a delete wins, otherwise one insert. Snapshots share the immutable levels (O(levels)). "
               "Concurrent batches run as their updates, then their queries. docs/lsm.md.",
               lsm_caps(), lsm_option_specs(), [](const StructureConfig& cfg) { return make_lsm(cfg); },
               validate_lsm_options});
  t.push_back({"btree", "GPU B-Tree (Awad et al., PPoPP 2019): B-link tree of 128-byte nodes, latched writes, concurrent batches",
               "A B-link tree of 128-byte nodes (14 pairs, high key, side link, low key, meta word with count, leaf "
               "flag, latch and version), bulk-built bottom-up from sorted pairs. Reads take no latch (seqlock "
               "snapshots); writes latch one node, splits are proactive with restarts. Concurrent batches run "
               "natively in one kernel: one thread per operation, its warp taking over root splits and full parents "
               "(--ops-kernel thread), or the paper's warp-cooperative kernel, a tile of --tile lanes serving one "
               "operation at a time (--ops-kernel tile). Phased updates are merged into their leaves level by level; "
               "with --phased-updates auto (the default) and --ops-kernel thread, short update lists into large trees "
               "run in the thread kernel instead (--phased-updates); phased queries run one thread each, lookups and successors of a bulk-built tree "
               "from its leaf directory (--leaf-directory). Deletes never merge nodes. Several updates of one key in "
               "a phased batch: any one wins. docs/btree.md.",
               btree_caps(), btree_option_specs(), [](const StructureConfig& cfg) { return make_btree(cfg); },
               validate_btree_options});
  t.push_back({"slabhash", "Slab hash with SlabAlloc (Ashkiani et al., IPDPS 2018): warp-cooperative chained hash table, --mode map|multimap|set",
               "A hash table of B buckets, each a list of 128-byte slabs (15 pairs or 30 keys, an alive-bit word, a "
               "32-bit next address), served by tiles of 4 lanes (eight operations per warp) that read one slab per "
               "step; SlabAlloc hands out slabs from super blocks of 1024-slab memory blocks. --mode map keeps keys "
               "unique (insert replaces), multimap keeps every pair (delete removes all of a key's pairs), set stores "
               "keys only. Lookup, delete, count and range of a single key (lo == hi); no successor, no snapshots. "
               "Deletes leave tombstones until a FLUSH (`cleanup`/`flush` steps, --flush-every, and by default when they pass --flush-tombstones of the base slots). Every key and value is storable. Concurrent batches "
               "run natively in one kernel. docs/slabhash.md.",
               slabhash_caps(), slabhash_option_specs(), [](const StructureConfig& cfg) { return make_slabhash(cfg); },
               validate_slabhash_options, slabhash_caps_for});
  t.push_back({"mvbtree",
               "Multiversion B-Tree (Awad, 2022, ch. 4): the B-Tree with O(1) snapshots, leaf states kept as versions",
               "The B-Tree (see btree, whose options it takes) with named snapshots: taking one is O(1) (a stamp). "
               "While snapshots are live, an update call first copies each leaf it changes that a live snapshot "
               "still reads into a version pool (one copy per leaf per call) and stamps it; leaves split off point "
               "at the leaf they came from. Queries at the latest state are the B-Tree's; queries at a snapshot "
               "descend the latest inner nodes and resolve each leaf to its state at the snapshot's stamp. Dropping "
               "a snapshot returns the states no live snapshot reads to the pool. A concurrent batch runs its queries "
               "first, on the state before it, then its updates: every count and range reads one state, and the "
               "verifier checks them exactly. Several updates of one key in a batch: any one wins. docs/mvbtree.md.",
               mvbtree_caps(), mvbtree_option_specs(), [](const StructureConfig& cfg) { return make_mvbtree(cfg); },
               validate_mvbtree_options});
  t.push_back({"graph", "Dynamic graph (Awad, 2022, ch. 5): a slab hash table per vertex, edges as keys u * 2^32 + v",
               "A directed graph whose edge (u, v) is the 64-bit key u * 2^32 + v (its value: a weight; --variant set "
               "keeps none). Every vertex has its own slab hash table: the build sizes its buckets from its degree "
               "(--load-factor), a vertex first named later gets one bucket, and the vertex capacity grows when a "
               "batch names a vertex beyond it (up to --max-vertices). Insert, delete and lookup are edge insert, "
               "delete and exists, run by the slab hash's batch kernel; count and range over a vertex block [u * "
               "2^32, u * 2^32 + 2^32 - 1] (range_length unit vertices) are u's degree and neighbours. No successor, "
               "no snapshots; a concurrent batch runs as its updates, then its queries. Several updates of one edge "
               "in a batch: any one wins. docs/graph.md.",
               graph_caps(), graph_option_specs(), [](const StructureConfig& cfg) { return make_graph(cfg); },
               validate_graph_options, graph_caps_for});
  return t;
}

}  // namespace

const std::vector<StructureInfo>& structures() {
  static const std::vector<StructureInfo> table = make_table();
  return table;
}

const StructureInfo* find_structure(const std::string& name) {
  for (const auto& s : structures())
    if (s.name == name) return &s;
  return nullptr;
}

std::string structures_supporting(OpType t) {
  std::string out;
  for (const auto& s : structures()) {
    // Count and range in their general form (lo < hi) need an ordered
    // structure; a hash structure answers them for a single key only
    // (point_count_range), so it is not named as supporting them.
    const bool general = (t == OpType::Count || t == OpType::Range) ? s.caps.ordered : s.caps.supports(t);
    if (!s.make_gpu || !general) continue;
    if (!out.empty()) out += ", ";
    out += s.name;
  }
  return out.empty() ? "none yet" : out;
}

const std::string& StructureConfig::get(const std::string& name) const {
  auto it = options.find(name);
  if (it == options.end()) throw InputError("internal: option --" + name + " is not defined");
  return it->second;
}

bool parse_uint_text(const std::string& s, uint64_t& v) {
  errno = 0;
  char* end = nullptr;
  const unsigned long long x = std::strtoull(s.c_str(), &end, 0);
  if (s.empty() || s[0] == '-' || errno != 0 || *end != '\0') return false;
  v = x;
  return true;
}

bool parse_number_text(const std::string& s, double& v) {
  errno = 0;
  char* end = nullptr;
  const double x = std::strtod(s.c_str(), &end);
  if (s.empty() || errno != 0 || *end != '\0') return false;
  v = x;
  return true;
}

std::string not_a_choice(const std::string& value, const std::vector<std::string>& choices) {
  if (choices.size() == 2) return "'" + value + "' is not " + choices[0] + " or " + choices[1];
  std::string all;
  for (const auto& c : choices) all += (all.empty() ? "" : ", ") + c;
  return "'" + value + "' is not one of " + all;
}

uint64_t StructureConfig::get_u64(const std::string& name) const {
  const std::string& s = get(name);
  uint64_t v = 0;
  if (!parse_uint_text(s, v)) throw InputError("--" + name + ": '" + s + "' is not a non-negative integer");
  return v;
}

bool StructureConfig::get_choice(const std::string& name, const char* first, const char* second) const {
  const std::string& s = get(name);
  if (s != first && s != second) throw InputError("--" + name + ": " + not_a_choice(s, {first, second}));
  return s == first;
}

size_t StructureConfig::get_one_of(const std::string& name, std::initializer_list<const char*> choices) const {
  const std::string& s = get(name);
  std::vector<std::string> all;
  for (const char* c : choices) {
    if (s == c) return all.size();
    all.push_back(c);
  }
  throw InputError("--" + name + ": " + not_a_choice(s, all));
}

double StructureConfig::get_double(const std::string& name) const {
  const std::string& s = get(name);
  double v = 0;
  if (!parse_number_text(s, v)) throw InputError("--" + name + ": '" + s + "' is not a number");
  return v;
}

}  // namespace gpudict
