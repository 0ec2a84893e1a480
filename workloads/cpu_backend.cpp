// The CPU backend: sorted arrays for maps and sets (cpu_sorted_store.hpp),
// an ordered std::map for multimaps, with snapshot copies, written
// independently of the verifier's models (reference.cpp, multimap_reference.cpp)
// so that each checks the other; the std::map store the sorted arrays
// replaced stays as the tests' oracle (make_cpu_dictionary_map_oracle).
// Deterministic:
//   map and set: several updates of one key in one batch resolve to the last
//     update (LastWins, AnyUpdate), to a delete if there is one, else the last
//     insert (DeleteWinsElseAny), or to the last insert if there is one, else
//     the delete (DeletesThenInserts: the batch's deletes run first);
//   multimap: a key holds its values in insertion order; DeletesThenInserts
//     (and AnyUpdate) run the batch's deletes, then every insert; LastWins runs
//     them in batch order; DeleteWinsElseAny empties a deleted key and drops
//     its inserts. A lookup reports the key's oldest value.
// Concurrent batches run as updates-then-queries, resolved the same way (one
// execution the concurrent semantics allow). A set stores every value as 0.
// Queries read the store on the host's threads (GPUDICT_THREADS), with the
// same results on any number; a sorted store's updates are resolved per key
// after a parallel sort, the std::map stores' run in batch order.
// The graph operations: vertex deletes after a phased batch's updates (a
// scan of every key), triangles by intersecting neighbour sets (its own
// count, not the reference's triangles.cpp).
#include "workloads/cpu_backend.hpp"

#include <algorithm>
#include <chrono>
#include <map>
#include <set>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "workloads/registry/registry.hpp"
#include "core/common/errors.hpp"
#include "workloads/kv_sort.hpp"
#include "workloads/cpu_sorted_store.hpp"
#include "workloads/parallel.hpp"
#include "workloads/parallel_sort.hpp"

namespace gpudict {

namespace {

using MapStore = std::map<uint64_t, uint64_t>;                  // map and set
using MultiStore = std::map<uint64_t, std::vector<uint64_t>>;   // multimap: values in insertion order

class Stopwatch {
 public:
  Stopwatch() : start_(std::chrono::steady_clock::now()) {}
  double ms() const {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_).count();
  }

 private:
  std::chrono::steady_clock::time_point start_;
};

// ---------------------------------------------------------------------------
// Map and set
// ---------------------------------------------------------------------------

void build_store(MapStore& m, const KeyValues& initial, const Capabilities& caps) {
  m.clear();
  const bool keys_only = caps.semantics == Semantics::Set;
  for (const auto& [key, value] : sorted_last_wins(initial)) m.emplace_hint(m.end(), key, keys_only ? 0 : value);
}

void apply_updates(MapStore& m, const Batch& batch, const Capabilities& caps) {
  const bool keys_only = caps.semantics == Semantics::Set;
  auto value_of = [&](size_t i) { return keys_only ? uint64_t{0} : batch.args[i]; };
  switch (caps.phased_duplicates) {
    case DuplicateRule::DeleteWinsElseAny: {
      // Keys deleted anywhere in the batch end deleted; the others take their
      // last insert.
      std::unordered_set<uint64_t> deleted;
      for (size_t i = 0; i < batch.size(); ++i)
        if (batch.types[i] == OpType::Delete) deleted.insert(batch.keys[i]);
      for (size_t i = 0; i < batch.size(); ++i)
        if (batch.types[i] == OpType::Insert && deleted.count(batch.keys[i]) == 0) m[batch.keys[i]] = value_of(i);
      for (uint64_t k : deleted) m.erase(k);
      return;
    }
    case DuplicateRule::DeletesThenInserts:
      // Every delete first, then the inserts in batch order (the last one wins).
      for (size_t i = 0; i < batch.size(); ++i)
        if (batch.types[i] == OpType::Delete) m.erase(batch.keys[i]);
      for (size_t i = 0; i < batch.size(); ++i)
        if (batch.types[i] == OpType::Insert) m[batch.keys[i]] = value_of(i);
      return;
    case DuplicateRule::LastWins:
    case DuplicateRule::AnyUpdate:
      // In batch order, so the last update wins.
      for (size_t i = 0; i < batch.size(); ++i) {
        if (batch.types[i] == OpType::Insert)
          m[batch.keys[i]] = value_of(i);
        else if (batch.types[i] == OpType::Delete)
          m.erase(batch.keys[i]);
      }
      return;
  }
}

// The pairs with keys in [lo, hi], in key order.
template <class Emit>
void for_range(const MapStore& m, uint64_t lo, uint64_t hi, Emit&& emit) {
  if (lo <= hi)
    for (auto it = m.lower_bound(lo), end = m.upper_bound(hi); it != end; ++it) emit(it->first, it->second);
}

uint64_t size_of(const MapStore& m) { return m.size(); }

// A key's value as a lookup or successor reports it: a multimap key's
// oldest (a stored key holds at least one value).
uint64_t first_value(uint64_t v) { return v; }
uint64_t first_value(const std::vector<uint64_t>& values) { return values.front(); }

// A key's lookup and successor in a std::map store (map or multimap).
template <class M>
bool lookup(const M& m, uint64_t key, uint64_t& value) {
  const auto it = m.find(key);
  if (it == m.end()) return false;
  value = first_value(it->second);
  return true;
}
template <class M>
bool successor(const M& m, uint64_t key, uint64_t& next, uint64_t& value) {
  const auto it = m.upper_bound(key);
  if (it == m.end()) return false;
  next = it->first;
  value = first_value(it->second);
  return true;
}
template <class M, class F>
void for_each_pair(const M& m, F&& f) {
  for (const auto& kv : m) f(kv.first);
}

// ---------------------------------------------------------------------------
// Map and set on sorted arrays
// ---------------------------------------------------------------------------

using SortedStore = CpuSortedStore;

void build_store(SortedStore& m, const KeyValues& initial, const Capabilities& caps) {
  m.assign(sorted_last_wins(initial), caps.semantics == Semantics::Set);
}

// The batch's updates resolved to one effect per key by the caps' rule, as
// the std::map store's apply_updates resolves them in batch order.
void apply_updates(SortedStore& m, const Batch& batch, const Capabilities& caps) {
  const bool keys_only = caps.semantics == Semantics::Set;
  std::vector<std::pair<uint64_t, uint32_t>> ops;  // (key, batch position), positions ascending
  parallel_select(
      batch.size(), uint64_t{1} << 16, [&](uint64_t i) { return is_update(batch.types[i]); },
      [&](uint64_t total) { ops.resize(total); },
      [&](uint64_t at, uint64_t i) { ops[at] = {batch.keys[i], static_cast<uint32_t>(i)}; });
  if (ops.empty()) return;
  const auto key_of = [](const std::pair<uint64_t, uint32_t>& x) { return x.first; };
  const auto [varying, ascending] = varying_bits(ops, key_of);
  if (!ascending) parallel_radix_sort(ops, varying, key_of);  // stable: a key's positions stay ascending
  std::vector<SortedStore::Effect> effects;
  for (size_t a = 0; a < ops.size();) {
    size_t e = a;
    int64_t last_insert = -1, last = -1;
    bool any_delete = false;
    for (; e < ops.size() && ops[e].first == ops[a].first; ++e) {
      const uint32_t i = ops[e].second;
      last = i;
      if (batch.types[i] == OpType::Insert)
        last_insert = i;
      else
        any_delete = true;
    }
    int64_t wins = -1;  // the insert that decides the key's value; -1: the key ends deleted
    switch (caps.phased_duplicates) {
      case DuplicateRule::LastWins:
      case DuplicateRule::AnyUpdate: wins = batch.types[last] == OpType::Insert ? last : -1; break;
      case DuplicateRule::DeletesThenInserts: wins = last_insert; break;
      case DuplicateRule::DeleteWinsElseAny: wins = any_delete ? -1 : last_insert; break;
    }
    effects.push_back(SortedStore::Effect{ops[a].first, wins >= 0,
                                          wins >= 0 && !keys_only ? batch.args[static_cast<size_t>(wins)] : 0});
    a = e;
  }
  m.apply(effects, ops.size());
}

template <class Emit>
void for_range(const SortedStore& m, uint64_t lo, uint64_t hi, Emit&& emit) {
  m.for_range(lo, hi, emit);
}
uint64_t size_of(const SortedStore& m) { return m.size(); }
bool lookup(const SortedStore& m, uint64_t key, uint64_t& value) { return m.find(key, value); }
bool successor(const SortedStore& m, uint64_t key, uint64_t& next, uint64_t& value) {
  return m.successor(key, next, value);
}
template <class F>
void for_each_pair(const SortedStore& m, F&& f) {
  m.for_range(0, ~uint64_t{0}, [&](uint64_t k, uint64_t) { f(k); });
}

// ---------------------------------------------------------------------------
// Multimap
// ---------------------------------------------------------------------------

void build_store(MultiStore& m, const KeyValues& initial, const Capabilities&) {
  m.clear();
  for (size_t i = 0; i < initial.size(); ++i) m[initial.keys[i]].push_back(initial.values[i]);  // every pair kept
}

void apply_updates(MultiStore& m, const Batch& batch, const Capabilities& caps) {
  auto insert = [&](size_t i) { m[batch.keys[i]].push_back(batch.args[i]); };
  switch (caps.phased_duplicates) {
    case DuplicateRule::LastWins:
      for (size_t i = 0; i < batch.size(); ++i) {
        if (batch.types[i] == OpType::Insert)
          insert(i);
        else if (batch.types[i] == OpType::Delete)
          m.erase(batch.keys[i]);
      }
      return;
    case DuplicateRule::DeleteWinsElseAny: {
      std::unordered_set<uint64_t> deleted;
      for (size_t i = 0; i < batch.size(); ++i)
        if (batch.types[i] == OpType::Delete) deleted.insert(batch.keys[i]);
      for (uint64_t k : deleted) m.erase(k);
      for (size_t i = 0; i < batch.size(); ++i)
        if (batch.types[i] == OpType::Insert && deleted.count(batch.keys[i]) == 0) insert(i);
      return;
    }
    case DuplicateRule::DeletesThenInserts:
    case DuplicateRule::AnyUpdate:
      for (size_t i = 0; i < batch.size(); ++i)
        if (batch.types[i] == OpType::Delete) m.erase(batch.keys[i]);
      for (size_t i = 0; i < batch.size(); ++i)
        if (batch.types[i] == OpType::Insert) insert(i);
      return;
  }
}

// The pairs with keys in [lo, hi], in key order, a key's values in insertion order.
template <class Emit>
void for_range(const MultiStore& m, uint64_t lo, uint64_t hi, Emit&& emit) {
  if (lo <= hi)
    for (auto it = m.lower_bound(lo), end = m.upper_bound(hi); it != end; ++it)
      for (uint64_t v : it->second) emit(it->first, v);
}

uint64_t size_of(const MultiStore& m) {
  uint64_t n = 0;
  for (const auto& [k, v] : m) n += v.size();
  return n;
}

// ---------------------------------------------------------------------------
// Graph operations, for either store (keys u * 2^32 + v)
// ---------------------------------------------------------------------------

uint32_t source_of(uint64_t k) { return static_cast<uint32_t>(k >> 32); }
uint32_t target_of(uint64_t k) { return static_cast<uint32_t>(k); }

// Every key from or to a vertex the batch's vertex deletes name.
std::unordered_set<uint32_t> deleted_vertices(const Batch& batch, const std::vector<uint32_t>& ops) {
  std::unordered_set<uint32_t> gone;
  for (uint32_t i : ops) gone.insert(source_of(batch.keys[i]));
  return gone;
}
template <class Store>
void delete_vertices(Store& m, const Batch& batch, const std::vector<uint32_t>& ops) {
  const auto gone = deleted_vertices(batch, ops);
  for (auto it = m.begin(); it != m.end();) {
    if (gone.count(source_of(it->first)) || gone.count(target_of(it->first)))
      it = m.erase(it);
    else
      ++it;
  }
}
void delete_vertices(SortedStore& m, const Batch& batch, const std::vector<uint32_t>& ops) {
  const auto gone = deleted_vertices(batch, ops);
  m.filter([&](uint64_t k) { return !gone.count(source_of(k)) && !gone.count(target_of(k)); });
}

// Triangles of the undirected simple graph of the keys: for every vertex u
// and neighbour v > u, the common neighbours w > v of both.
template <class Store>
uint64_t triangles_of(const Store& m) {
  std::map<uint32_t, std::set<uint32_t>> adj;
  for_each_pair(m, [&](uint64_t key) {
    const uint32_t u = source_of(key), v = target_of(key);
    if (u == v) return;
    adj[u].insert(v);
    adj[v].insert(u);
  });
  uint64_t n = 0;
  for (const auto& [u, nu] : adj)
    for (auto vi = nu.upper_bound(u); vi != nu.end(); ++vi) {
      const std::set<uint32_t>& nv = adj[*vi];
      for (auto wi = std::next(vi); wi != nu.end(); ++wi) n += nv.count(*wi);
    }
  return n;
}

// ---------------------------------------------------------------------------
// Queries of one type, on the host's threads: the store is only read, and
// each operation writes its own result slots. A range's pairs go where the
// serial loop would have appended them (in the order of `ops`): counted
// first, placed by a prefix sum, then written.
// ---------------------------------------------------------------------------

// A count's answer: the pairs in [lo, hi] (a multimap key with its
// multiplicity), walked; the sorted store counts from positions alone.
template <class Store>
uint64_t count_range(const Store& m, uint64_t lo, uint64_t hi) {
  uint64_t n = 0;
  for_range(m, lo, hi, [&](uint64_t, uint64_t) { ++n; });
  return n;
}
uint64_t count_range(const SortedStore& m, uint64_t lo, uint64_t hi) { return m.count(lo, hi); }

// A lookup or a successor (counts and ranges: run_queries).
template <class Store>
void run_point_query(const Store& m, const Batch& batch, uint32_t i, BatchResults& r) {
  const uint64_t key = batch.keys[i];
  uint64_t next = 0, value = 0;
  if (batch.types[i] == OpType::Lookup) {
    if (!lookup(m, key, value)) return;
  } else {
    if (!successor(m, key, next, value)) return;
    r.key[i] = next;
  }
  r.found[i] = 1;
  r.value[i] = value;
}

template <class Store>
void run_queries(const Store& m, const Batch& batch, OpType type, const std::vector<uint32_t>& ops, BatchResults& r) {
  constexpr uint64_t kGrain = uint64_t{1} << 10;
  if (type != OpType::Range && type != OpType::Count) {
    parallel_for(ops.size(), kGrain, [&](uint64_t lo, uint64_t hi) {
      for (uint64_t j = lo; j < hi; ++j) run_point_query(m, batch, ops[j], r);
    });
    return;
  }
  // Counts, and a range's first pass: the pairs in [key, arg] (a multimap
  // key counts with its multiplicity).
  parallel_for(ops.size(), kGrain, [&](uint64_t lo, uint64_t hi) {
    for (uint64_t j = lo; j < hi; ++j) r.value[ops[j]] = count_range(m, batch.keys[ops[j]], batch.args[ops[j]]);
  });
  if (type == OpType::Count) return;
  uint64_t at = r.range_keys.size();
  for (uint32_t i : ops) {
    r.key[i] = at;
    at += r.value[i];
  }
  r.range_keys.resize(at);
  r.range_values.resize(at);
  parallel_for(ops.size(), kGrain, [&](uint64_t lo, uint64_t hi) {
    for (uint64_t j = lo; j < hi; ++j) {
      uint64_t w = r.key[ops[j]];
      for_range(m, batch.keys[ops[j]], batch.args[ops[j]], [&](uint64_t k, uint64_t v) {
        r.range_keys[w] = k;
        r.range_values[w++] = v;
      });
    }
  });
}

// ---------------------------------------------------------------------------
// The Dictionary, for any store
// ---------------------------------------------------------------------------

template <class Store>
class CpuDictionary final : public Dictionary {
 public:
  // Keys and values are held as u64 whatever the workload's widths.
  CpuDictionary(const Capabilities& caps, std::string structure) : caps_(caps), structure_(std::move(structure)) {
    caps_.native_concurrent = false;      // a concurrent batch runs as its updates, then its queries,
    caps_.concurrent_queries_first = false;  // not queries first: the general concurrent checks apply
  }

  const Capabilities& caps() const override { return caps_; }

  // The semantics verified against (the slab hash's --mode), beside the backend.
  Params parameters() const override {
    return {{"backend", "cpu-reference"}, {"semantics", std::string(semantics_name(caps_.semantics))}};
  }

  uint64_t device_bytes_needed(const WorkloadBounds&) const override { return 0; }

  void build(const KeyValues& initial, DeviceTime& t) override {
    Stopwatch sw;
    build_store(live_, initial, caps_);
    t.add(Phase::Build, sw.ms());
  }

  void execute(const Batch& batch, BatchResults& r, DeviceTime& t) override {
    const uint64_t index = batches_++;
    refuse_unsupported(caps_, structure_, batch, index);
    r.reset(batch.size());
    const Store* target = &live_;
    if (!batch.snapshot.empty()) {
      auto it = snapshots_.find(batch.snapshot);
      if (it == snapshots_.end()) throw InputError("unknown snapshot '" + batch.snapshot + "'");
      target = &it->second;
    }
    const BatchPlan plan(batch);
    const bool concurrent = batch.mode == ExecMode::Concurrent;
    Stopwatch whole;

    if (plan.updates() > 0) {
      Stopwatch sw;
      apply_updates(live_, batch, caps_);
      if (!concurrent) t.add(Phase::Update, sw.ms());
    }
    if (!plan.of(OpType::VertexDelete).empty()) {  // (phased batches only: refuse_unsupported)
      Stopwatch sw;
      delete_vertices(live_, batch, plan.of(OpType::VertexDelete));
      t.add(Phase::VertexDelete, sw.ms());
    }
    for (OpType type : {OpType::Lookup, OpType::Count, OpType::Range, OpType::Successor}) {
      const std::vector<uint32_t>& ops = plan.of(type);
      if (ops.empty()) continue;
      Stopwatch sw;
      run_queries(*target, batch, type, ops, r);
      if (!concurrent) t.add(query_phase(type), sw.ms());
    }
    if (!plan.of(OpType::Triangles).empty()) {
      Stopwatch sw;
      const uint64_t n = triangles_of(*target);
      for (uint32_t i : plan.of(OpType::Triangles)) r.value[i] = n;
      t.add(Phase::Triangles, sw.ms());
    }
    if (concurrent) t.add(Phase::Concurrent, whole.ms());
  }

  void snapshot(const std::string& name, DeviceTime& t) override {
    if (snapshots_.count(name)) throw InputError("snapshot '" + name + "' already exists");
    Stopwatch sw;
    snapshots_.emplace(name, live_);
    t.add(Phase::Snapshot, sw.ms());
  }

  void drop_snapshot(const std::string& name) override {
    if (snapshots_.erase(name) == 0) throw InputError("unknown snapshot '" + name + "'");
  }

  Stats stats() const override {
    Stats s;
    s.size = size_of(live_);
    s.device_bytes = 0;
    s.extra = {{"snapshots", std::to_string(snapshots_.size())}};
    return s;
  }

 private:
  Capabilities caps_;
  std::string structure_;
  Store live_;
  std::map<std::string, Store> snapshots_;
  uint64_t batches_ = 0;  // batches executed: the index the refusal names
};

}  // namespace

void refuse_unsupported(const Capabilities& caps, const std::string& structure, const Batch& batch, uint64_t index) {
  for (size_t i = 0; i < batch.size(); ++i) {
    const OpType t = batch.types[i];
    if (!caps.supports(t))
      throw InputError(fmt::format("{} does not support {} operations (batch {}); structures that do: {}", structure,
                                   op_name(t), index, structures_supporting(t)));
    if (is_graph_op(t) && batch.mode == ExecMode::Concurrent)
      throw InputError(fmt::format("{} runs in phased batches only; batch {} is concurrent", op_name(t), index));
    if (t == OpType::VertexDelete && (batch.keys[i] & 0xFFFFFFFFull) != 0)
      throw InputError(fmt::format("vertex_delete takes the first key of a vertex's block, u * 2^32; operation {} "
                                   "of batch {} has key {}",
                                   i, index, batch.keys[i]));
    if ((t == OpType::Count || t == OpType::Range) && !caps.ordered) {
      if (caps.vertex_count_range) {
        if (!is_vertex_block(batch.keys[i], batch.args[i]))
          throw InputError(vertex_block_query_message(structure, t, batch.keys[i], batch.args[i], index));
      } else if (batch.keys[i] != batch.args[i]) {
        throw InputError(point_query_refusal(structure, t, batch.keys[i], batch.args[i], index));
      }
    }
  }
}

std::string point_query_refusal(const std::string& structure, OpType t, uint64_t lo, uint64_t hi, uint64_t batch) {
  return fmt::format("{} answers count and range for a single key only (lo == hi); got {} [{}, {}] in batch {}; "
                     "ordered count and range: {}",
                     structure, op_name(t), lo, hi, batch, structures_supporting(t));
}

std::unique_ptr<Dictionary> make_cpu_dictionary(const Capabilities& caps, KeyType /*key_type*/,
                                                KeyType /*value_type*/, const std::string& structure) {
  if (caps.semantics == Semantics::Multimap) return std::make_unique<CpuDictionary<MultiStore>>(caps, structure);
  return std::make_unique<CpuDictionary<SortedStore>>(caps, structure);
}

std::unique_ptr<Dictionary> make_cpu_dictionary_map_oracle(const Capabilities& caps, const std::string& structure) {
  if (caps.semantics == Semantics::Multimap) return std::make_unique<CpuDictionary<MultiStore>>(caps, structure);
  return std::make_unique<CpuDictionary<MapStore>>(caps, structure);
}

}  // namespace gpudict
