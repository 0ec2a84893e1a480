#include "workloads/generator.hpp"
#include "workloads/graph_gen.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <utility>

#include "core/common/errors.hpp"
#include "workloads/distributions.hpp"
#include "workloads/keyfile.hpp"
#include "workloads/kv_sort.hpp"
#include "workloads/parallel.hpp"
#include "workloads/parallel_sort.hpp"
#include "workloads/rng.hpp"
#include "workloads/sorted_index.hpp"
#include "workloads/triangles.hpp"
#include "workloads/uninit_vector.hpp"

// Deterministic floating point (see distributions.cpp).
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

namespace gpudict {

namespace {

// Stream tags: Rng::stream(seed, tag, step index, batch index).
constexpr uint64_t kStreamInitialKeys = 0x1417;
constexpr uint64_t kStreamInitialValues = 0x1418;
constexpr uint64_t kStreamBatch = 0xBA7C;
constexpr uint64_t kTypeShuffleTag = 0x7195;  // the key of a batch's type permutation
constexpr uint64_t kScrambleTag = 0x5C7A3B1E9D2F4061ull;

// Absent ("miss") draws retry this many universe draws before accepting a present key.
constexpr int kMissAttempts = 64;

uint64_t scramble_seed(uint64_t seed) { return splitmix64(seed ^ kScrambleTag); }

// Sorts 64-bit keys (parallel_sort.hpp): the same result as std::sort.
void radix_sort(std::vector<uint64_t>& v) {
  if (v.size() < (size_t{1} << 16)) {
    std::sort(v.begin(), v.end());
    return;
  }
  const auto key_of = [](uint64_t k) { return k; };
  const auto [varying, ascending] = varying_bits(v, key_of);
  if (!ascending) parallel_radix_sort(v, varying, key_of);
}

// The generator's model of which keys are present: a sorted vector plus the
// updates since it was last brought up to date (last wins, in order). Merged
// only when a hit/miss decision needs it, or when the pending list is large.
class PresentModel {
 public:
  void reset(std::vector<uint64_t> keys) {
    if (!std::is_sorted(keys.begin(), keys.end())) radix_sort(keys);
    keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
    present_.resize(keys.size());
    parallel_for(keys.size(), uint64_t{1} << 16, [&](uint64_t lo, uint64_t hi) {
      std::copy(keys.begin() + static_cast<ptrdiff_t>(lo), keys.begin() + static_cast<ptrdiff_t>(hi),
                present_.begin() + static_cast<ptrdiff_t>(lo));
    });
    pending_.keys.clear();
    pending_.values.clear();
    index_valid_ = false;
  }
  void record(uint64_t key, bool insert) {
    pending_.keys.push_back(key);
    pending_.values.push_back(insert ? 1 : 0);
  }
  size_t pending() const { return pending_.size(); }
  bool large_backlog() const { return pending_.size() > 2 * present_.size() + (size_t{1} << 22); }

  // Brings the keys up to date and indexes them: after this, keys() and
  // contains() are read-only, so threads may share the model.
  void materialize() {
    merge_pending();
    if (!index_valid_) {
      index_.build(present_);
      index_valid_ = true;
    }
  }

  // Vertex deletes: every key whose source or target is one of `vertices`
  // (sorted, unique; keys u * 2^32 + v) leaves the model.
  void erase_vertices(const std::vector<uint32_t>& vertices) {
    merge_pending();
    uninit_vector<uint64_t> out;
    parallel_select(
        present_.size(), uint64_t{1} << 16, [&](uint64_t i) { return !touches_vertex(vertices, present_[i]); },
        [&](uint64_t total) { out.resize(total); }, [&](uint64_t rank, uint64_t i) { out[rank] = present_[i]; });
    present_.swap(out);
    index_valid_ = false;
  }

  // Valid after materialize().
  const uninit_vector<uint64_t>& keys() const { return present_; }
  // Asks the cache for what contains(k) reads first (its bucket's bounds).
  void prefetch_contains(uint64_t k) const {
    if (index_valid_) index_.prefetch(present_, k);
  }
  bool contains(uint64_t k) const {
    return index_valid_ ? index_.contains(present_, k) : std::binary_search(present_.begin(), present_.end(), k);
  }

 private:
  void merge_pending() {
    if (pending_.size() == 0) return;
    // By key, the last update of each key kept (value 1: insert, 0: delete).
    const auto last = sorted_last_wins(pending_);
    pending_.keys.clear();
    pending_.keys.shrink_to_fit();
    pending_.values.clear();
    pending_.values.shrink_to_fit();
    uninit_vector<uint64_t> out;  // written in full by the merge's threads: no zero-fill first
    merge_with_updates(
        present_.size(), [&](uint64_t i) { return present_[i]; }, last.size(),
        [&](uint64_t j) { return last[j].first; }, [&](uint64_t j) { return last[j].second != 0; },
        [&](uint64_t total) { out.resize(total); },
        [&](uint64_t at, bool from_base, uint64_t i) { out[at] = from_base ? present_[i] : last[i].first; });
    present_.swap(out);
    index_valid_ = false;
  }

  uninit_vector<uint64_t> present_;
  KeyValues pending_;  // updates since the last merge, in order (value 1: insert, 0: delete)
  bool index_valid_ = false;  // index_ is of present_ as it is
  SortedIndex index_;          // fast membership tests (a miss draw tests every candidate)
};

uint64_t non_inserts(const std::array<uint64_t, kNumOpTypes>& counts) {
  uint64_t n = 0;
  for (OpType t : kAllOpTypes)
    if (t != OpType::Insert) n += counts[static_cast<int>(t)];
  return n;
}

// `count` unique ranks in [0, last] drawn uniformly, sorted. Draw j is
// Rng::at(seed, j) (j counts on across rounds and the dense case's
// complement), so the draws run in parallel and the result does not depend
// on the number of threads.
std::vector<uint64_t> uniform_unique_ranks(uint64_t seed, uint64_t last, uint64_t count, uint64_t& next_draw) {
  std::vector<uint64_t> r;
  if (count == 0) return r;
  if (last != ~0ull && count > (last + 1) / 2) {
    // Dense: draw the keys to leave out instead, then list the others.
    const std::vector<uint64_t> excluded = uniform_unique_ranks(seed, last, last + 1 - count, next_draw);
    r.reserve(count);
    size_t e = 0;
    for (uint64_t k = 0;; ++k) {
      if (e < excluded.size() && excluded[e] == k) ++e;
      else r.push_back(k);
      if (k == last) break;
    }
    return r;
  }
  r.reserve(count);
  while (r.size() < count) {
    const size_t have = r.size();
    const uint64_t need = count - have;
    std::vector<uint64_t> fresh(need);
    const uint64_t first = next_draw;
    parallel_for(need, uint64_t{1} << 16, [&](uint64_t lo, uint64_t hi) {
      for (uint64_t x = lo; x < hi; ++x) fresh[x] = Rng::at(seed, first + x).upto(last);
    });
    next_draw += need;
    radix_sort(fresh);
    r.insert(r.end(), fresh.begin(), fresh.end());
    std::inplace_merge(r.begin(), r.begin() + static_cast<std::ptrdiff_t>(have), r.end());
    r.erase(std::unique(r.begin(), r.end()), r.end());
  }
  return r;
}

}  // namespace

std::array<uint64_t, kNumOpTypes> batch_op_counts(const std::array<double, kNumOpTypes>& mix, uint64_t batch_size) {
  std::array<uint64_t, kNumOpTypes> counts{};
  double sum = 0;
  for (double m : mix)
    if (m > 0) sum += m;
  if (batch_size == 0 || !(sum > 0)) return counts;
  const double b = static_cast<double>(batch_size);
  if (sum == b) {  // operation counts (spec.cpp), when they are whole numbers
    bool whole = true;
    for (int t = 0; t < kNumOpTypes; ++t) whole &= !(mix[t] > 0) || mix[t] == std::floor(mix[t]);
    if (whole) {
      for (int t = 0; t < kNumOpTypes; ++t) counts[t] = mix[t] > 0 ? static_cast<uint64_t>(mix[t]) : 0;
      return counts;
    }
  }
  std::array<double, kNumOpTypes> frac{};
  uint64_t total = 0;
  for (int t = 0; t < kNumOpTypes; ++t) {
    if (!(mix[t] > 0)) continue;
    const double q = mix[t] / sum * b;
    const double f = std::floor(q);
    counts[t] = std::min<uint64_t>(static_cast<uint64_t>(f), batch_size);
    frac[t] = q - f;
    total += counts[t];
  }
  while (total > batch_size) {  // rounding made the floors overshoot: take from the smallest fractions
    int pick = -1;
    for (int t = 0; t < kNumOpTypes; ++t)
      if (counts[t] > 0 && (pick < 0 || frac[t] < frac[pick])) pick = t;
    --counts[pick];
    frac[pick] = 1.0;
    --total;
  }
  std::array<int, kNumOpTypes> order;
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int c) { return frac[a] > frac[c]; });
  for (size_t i = 0; total < batch_size; i = (i + 1) % order.size()) {
    if (!(mix[order[i]] > 0)) continue;
    ++counts[order[i]];
    ++total;
  }
  return counts;
}

// The reverse of edge (u, v): (v, u).
uint64_t reverse_edge(uint64_t k) { return (k << 32) | (k >> 32); }

// An undirected workload's batch: each insert and delete followed by the
// same operation on the reverse edge (a self-loop's reverse is itself: the
// update twice, with one value, changes nothing). Queries keep their order.
void mirror_updates(Batch& b) {
  uint64_t updates = 0;
  for (OpType t : b.types) updates += is_update(t) ? 1 : 0;
  if (updates == 0) return;
  Batch m;
  m.mode = b.mode;
  m.snapshot = b.snapshot;
  m.types.reserve(b.size() + updates);
  m.keys.reserve(b.size() + updates);
  m.args.reserve(b.size() + updates);
  for (size_t i = 0; i < b.size(); ++i) {
    m.push(b.types[i], b.keys[i], b.args[i]);
    if (is_update(b.types[i])) m.push(b.types[i], reverse_edge(b.keys[i]), b.args[i]);
  }
  b = std::move(m);
}

// Initial edges, each followed by its reverse with the same value (of an
// edge given both ways, the later pair of each way wins: the same value).
void mirror_initial(KeyValues& kv) {
  KeyValues m;
  m.keys.resize(2 * kv.size());
  m.values.resize(2 * kv.size());
  parallel_for(kv.size(), uint64_t{1} << 16, [&](uint64_t lo, uint64_t hi) {
    for (uint64_t i = lo; i < hi; ++i) {
      m.keys[2 * i] = kv.keys[i];
      m.keys[2 * i + 1] = reverse_edge(kv.keys[i]);
      m.values[2 * i] = m.values[2 * i + 1] = kv.values[i];
    }
  });
  kv = std::move(m);
}

// Whether the initial contents are mirrored: an undirected workload's,
// unless they are a generated graph (already symmetric).
bool mirrored_initial(const WorkloadSpec& spec) {
  return spec.undirected && spec.initial.source != InitialSpec::Source::None &&
         spec.initial.source != InitialSpec::Source::Graph;
}

bool initial_can_fail(const InitialSpec& in) {
  // Mirrors generate_initial's cases below: the file read, and the switch's drawing branch.
  return in.source == InitialSpec::Source::File ||
         (in.source == InitialSpec::Source::Generated && in.keys.kind != DistKind::Uniform &&
          in.keys.kind != DistKind::Sequential);
}

// The first in.count distinct keys of the draws Rng::at(seed, 0), (seed, 1),
// ... of `sampler`, sorted: what drawing one at a time into a set until it
// holds in.count keys gives, made in rounds of draws on the host's threads.
// A round's draws join the distinct keys so far (each with its first draw's
// index); sorted by key, a key keeps its first draw. When there are enough,
// the in.count with the smallest first draws are the keys.
std::vector<uint64_t> first_unique_draws(const KeySampler& sampler, uint64_t seed, const InitialSpec& in) {
  const uint64_t max_draws = 100 * in.count + (uint64_t{1} << 20);
  std::vector<std::pair<uint64_t, uint64_t>> pool;  // (key, first draw), distinct keys
  uint64_t draws = 0;
  const auto by_key = [](const std::pair<uint64_t, uint64_t>& p) { return p.first; };
  const auto by_draw = [](const std::pair<uint64_t, uint64_t>& p) { return p.second; };
  for (;;) {
    if (draws == max_draws)
      throw_spec_error(in.count_pos, "initial.count",
                       "distribution '" + std::string(dist_name(in.keys.kind)) + "' produced only " +
                           std::to_string(pool.size()) + " unique keys in " + std::to_string(draws) + " draws",
                       "a count the distribution can produce as unique keys, or a wider distribution");
    const uint64_t want = in.count - std::min<uint64_t>(in.count, pool.size());
    const uint64_t m = std::min(max_draws - draws, std::max<uint64_t>(want + want / 4, uint64_t{1} << 16));
    const uint64_t at = pool.size();
    pool.resize(at + m);
    parallel_for(m, uint64_t{1} << 14, [&](uint64_t lo, uint64_t hi) {
      KeySampler s = sampler;  // its caches are the thread's own
      for (uint64_t i = lo; i < hi; ++i) {
        Rng rng = Rng::at(seed, draws + i);
        pool[at + i] = {s.universe(rng), draws + i};
      }
    });
    draws += m;
    // Stable by key: of a key's entries, the earliest draw stays first.
    parallel_radix_sort(pool, varying_bits(pool, by_key).first, by_key);
    pool.erase(std::unique(pool.begin(), pool.end(), [](const auto& a, const auto& b) { return a.first == b.first; }),
               pool.end());
    if (pool.size() >= in.count) break;
    // The next round's draws come after every draw so far: keep the pool
    // in draw order, as the round's are.
    parallel_radix_sort(pool, varying_bits(pool, by_draw).first, by_draw);
  }
  parallel_radix_sort(pool, varying_bits(pool, by_draw).first, by_draw);
  pool.resize(in.count);
  std::vector<uint64_t> keys(in.count);
  for (uint64_t i = 0; i < in.count; ++i) keys[i] = pool[i].first;
  radix_sort(keys);
  return keys;
}

KeyValues generate_initial(const WorkloadSpec& spec) {
  const InitialSpec& in = spec.initial;
  KeyValues kv;
  if (in.source == InitialSpec::Source::None) return kv;
  const uint64_t key_max = max_of(spec.key_type);
  const uint64_t value_max = max_of(spec.value_type);

  if (in.source == InitialSpec::Source::Graph) {
    kv.keys = *graph_edges(in.graph_family, spec.seed, in.graph_scale);
  } else if (in.source == InitialSpec::Source::File) {
    try {
      kv.keys = read_key_file(in.file, in.count, key_max);
    } catch (const InputError& e) {
      throw_spec_error(in.file_pos, "initial.file", e.what(), "");
    }
  } else {
    const uint64_t seed = Rng::stream_seed(spec.seed, kStreamInitialKeys);
    KeySampler sampler(in.keys, scramble_seed(spec.seed));
    const uint64_t last = in.keys.max - in.keys.min;
    switch (in.keys.kind) {
      case DistKind::Uniform: {
        uint64_t draws = 0;
        kv.keys = uniform_unique_ranks(seed, last, in.count, draws);
        for (uint64_t& k : kv.keys) k += in.keys.min;
        break;
      }
      case DistKind::Sequential: {  // unique: the parser checked the period
        uint64_t counter = 0;
        Rng rng(seed);  // (a sequential rank draws nothing)
        kv.keys.resize(in.count);
        for (uint64_t& k : kv.keys) k = in.keys.min + sampler.rank_with_counter(rng, last, counter);
        break;
      }
      default:
        kv.keys = first_unique_draws(sampler, seed, in);
        break;
    }
  }

  kv.values.resize(kv.keys.size());
  switch (in.values) {
    case InitialValues::Random: {
      const uint64_t seed = Rng::stream_seed(spec.seed, kStreamInitialValues);
      parallel_for(kv.values.size(), uint64_t{1} << 16, [&](uint64_t lo, uint64_t hi) {
        for (uint64_t i = lo; i < hi; ++i) kv.values[i] = Rng::at(seed, i).upto(value_max);
      });
      break;
    }
    case InitialValues::Key:
      for (size_t i = 0; i < kv.keys.size(); ++i) kv.values[i] = kv.keys[i] & value_max;
      break;
    case InitialValues::Index:
      for (size_t i = 0; i < kv.keys.size(); ++i) kv.values[i] = static_cast<uint64_t>(i) & value_max;
      break;
    case InitialValues::File:
      try {
        kv.values = read_raw_values(in.values_file, in.values_file_width, kv.keys.size());
      } catch (const InputError& e) {
        throw_spec_error(in.values_pos, "initial.values.file", e.what(), "");
      }
      break;
  }
  if (mirrored_initial(spec)) mirror_initial(kv);
  return kv;
}

// ---------------------------------------------------------------- GeneratedSource

struct GeneratedSource::Impl {
  WorkloadSpec spec;
  WorkloadHeader header;
  std::vector<char> need_model;  // [i]: some phase at step >= i draws deletes or queries
  PresentModel model;

  enum class State { Initial, Steps, InPhase, BatchPhaseEmitted } state = State::Initial;
  size_t step = 0;
  uint64_t batch = 0;
  std::unique_ptr<KeySampler> sampler;
  std::unique_ptr<RangeLengthSampler> lengths;
  std::array<uint64_t, kNumOpTypes> counts{};

  explicit Impl(WorkloadSpec s) : spec(std::move(s)) {
    header.name = spec.name;
    header.path = spec.path;
    header.format = "yaml";
    header.key_type = spec.key_type;
    header.value_type = spec.value_type;
    header.seed = spec.seed;
    header.undirected = spec.undirected;
    need_model.assign(spec.steps.size() + 1, 0);
    for (size_t i = spec.steps.size(); i-- > 0;) {
      const StepSpec& st = spec.steps[i];
      bool needs = false;
      if (st.kind == StepSpecKind::Phase)
        needs = non_inserts(batch_op_counts(st.phase.mix, st.phase.batch_size)) > 0;
      need_model[i] = needs || need_model[i + 1];
    }
  }

  void record_updates(const Batch& b) {
    for (size_t i = 0; i < b.size(); ++i) {
      if (b.types[i] == OpType::Insert) model.record(b.keys[i], true);
      else if (b.types[i] == OpType::Delete) model.record(b.keys[i], false);
    }
    record_vertex_deletes(b);
  }
  // A batch's vertex deletes take effect after all of its edge updates.
  void record_vertex_deletes(const Batch& b) {
    const std::vector<uint32_t> gone = deleted_vertices(b);
    if (!gone.empty()) model.erase_vertices(gone);
  }

  // Operation i of a batch draws only from Rng::at(batch seed, i), its type
  // from a keyed permutation of the positions: the operations are made in
  // parallel, and the same on any number of threads. Phases of sequential
  // keys (a counter advanced in position order) run on one thread.
  void generate_batch(const PhaseSpec& ph, Batch& b) {
    const uint64_t seed = Rng::stream_seed(spec.seed, kStreamBatch, step, batch);
    const uint64_t n = ph.batch_size;
    b.mode = ph.mode;
    b.snapshot = ph.snapshot;
    b.types.resize(n);
    b.keys.assign(n, 0);
    b.args.assign(n, 0);
    if (n == 0) return;
    // Types: the counts laid out in kAllOpTypes order, permuted.
    std::array<uint64_t, kNumOpTypes> end{};
    uint64_t sum = 0;
    for (int t = 0; t < kNumOpTypes; ++t) end[t] = sum += counts[t];
    int only = -1;  // the one type of a batch of one type (no permutation needed)
    for (int t = 0; t < kNumOpTypes; ++t)
      if (counts[t] == n) only = t;
    if (only >= 0) {
      std::fill(b.types.begin(), b.types.end(), static_cast<OpType>(only));
    } else {
      const FeistelPermutation perm(n - 1, splitmix64(seed ^ kTypeShuffleTag));
      parallel_for(n, uint64_t{1} << 14, [&](uint64_t lo, uint64_t hi) {
        for (uint64_t i = lo; i < hi; ++i) {
          const uint64_t slot = perm(i);
          int t = 0;
          while (slot >= end[t]) ++t;
          b.types[i] = static_cast<OpType>(t);
        }
      });
    }

    const bool tracking = need_model[step] != 0;
    const uint64_t vertex_deletes = counts[static_cast<int>(OpType::VertexDelete)];
    const uint64_t updates = counts[static_cast<int>(OpType::Insert)] + counts[static_cast<int>(OpType::Delete)];
    const bool has_queries = updates + vertex_deletes < n;
    const bool phased = ph.mode == ExecMode::Phased;
    const uint64_t value_max = max_of(spec.value_type);
    const uint64_t key_max = max_of(spec.key_type);
    const double universe = sampler->universe_size();
    const bool serial = sampler->spec().kind == DistKind::Sequential;
    const bool vertex_ranges = lengths && lengths->spec().unit == RangeUnit::Vertices;

    // Keys (and values, bounds) of the operations a pass makes.
    auto fill = [&](bool updates_pass, bool queries_pass) {
      // In blocks: each operation's first random draws and the address it
      // will read (a present key, or the index bucket of a miss candidate)
      // first, with a prefetch, then the reads: the cache misses of a block
      // overlap. A delete or query key is present with probability
      // hit_ratio (a present draw), else absent (a universe draw not in the
      // model, up to kMissAttempts tries; the last is kept).
      auto make = [&](uint64_t lo, uint64_t hi, KeySampler& s) {
        constexpr int kBlock = 32;
        const uninit_vector<uint64_t>& present = model.keys();
        struct Op {
          uint64_t i;
          Rng rng{0};
          bool hit;
          uint64_t v;  // hit: the rank; miss: the first candidate key
        } op[kBlock];
        for (uint64_t i = lo; i < hi;) {
          int m = 0;
          for (; i < hi && m < kBlock; ++i) {
            const OpType t = b.types[i];
            // (a vertex delete draws from the state before the batch, as a delete does)
            if (is_update(t) || t == OpType::VertexDelete ? !updates_pass : !queries_pass) continue;
            if (t == OpType::Triangles) continue;  // no key (0)
            Rng rng = Rng::at(seed, i);
            if (t == OpType::Insert) {
              b.keys[i] = s.universe(rng);
              b.args[i] = rng.upto(value_max);
              continue;
            }
            Op& o = op[m++];
            o.i = i;
            o.hit = rng.bernoulli(ph.hit_ratio) && !present.empty();
            if (o.hit) {
              o.v = s.present_rank(rng, present.size() - 1);
              __builtin_prefetch(&present[o.v]);
            } else {
              o.v = s.universe(rng);  // (a hit on an empty model draws from the universe too)
              model.prefetch_contains(o.v);
            }
            o.rng = rng;
          }
          for (int x = 0; x < m; ++x) {
            Op& o = op[x];
            const OpType t = b.types[o.i];
            uint64_t k = o.v;
            if (o.hit) {
              k = present[o.v];
            } else {
              // A miss: up to kMissAttempts candidates, the first drawn above
              // (an empty model makes the first one absent).
              for (int a = 1; a < kMissAttempts && model.contains(k); ++a) k = s.universe(o.rng);
            }
            if (((t == OpType::Count || t == OpType::Range) && vertex_ranges) || t == OpType::VertexDelete)
              k &= ~uint64_t{0xFFFFFFFF};  // its vertex block
            b.keys[o.i] = k;
            if (t == OpType::Count || t == OpType::Range) {
              const uint64_t span = lengths->span(o.rng, universe, present.size());
              b.args[o.i] = (span - 1 > key_max - k) ? key_max : k + (span - 1);
            }
          }
        }
      };
      if (serial) {
        make(0, n, *sampler);
        return;
      }
      parallel_for(n, uint64_t{1} << 12, [&](uint64_t lo, uint64_t hi) {
        KeySampler s = *sampler;  // its caches are the thread's own
        make(lo, hi, s);
      });
    };

    if (counts[static_cast<int>(OpType::Delete)] > 0 || vertex_deletes > 0 || (has_queries && !phased))
      model.materialize();
    if (phased) {
      fill(true, false);
      if (tracking) record_updates(b);
      if (has_queries) {
        model.materialize();
        fill(false, true);
      }
    } else {
      fill(true, true);  // every draw from the model before the batch
      if (tracking) record_updates(b);
    }
    if (tracking && model.large_backlog()) model.materialize();
  }

  bool next(Step& out) {
    out.clear();
    if (state == State::Initial) {
      out.kind = StepKind::Initial;
      out.initial = generate_initial(spec);
      if (need_model[0]) model.reset(out.initial.keys);
      state = State::Steps;
      step = 0;
      return true;
    }
    for (;;) {
      if (state == State::InPhase) {
        const PhaseSpec& ph = spec.steps[step].phase;
        if (batch < ph.batches) {
          out.kind = StepKind::Batch;
          generate_batch(ph, out.batch);
          if (spec.undirected) {
            mirror_updates(out.batch);
            if (need_model[step]) {  // the reverse edges too (the odd positions after each update)
              for (size_t i = 0; i + 1 < out.batch.size(); ++i)
                if (is_update(out.batch.types[i])) {
                  model.record(out.batch.keys[i + 1], out.batch.types[i] == OpType::Insert);
                  ++i;
                }
              record_vertex_deletes(out.batch);  // again: after the reverse edges too
            }
          }
          ++batch;
          return true;
        }
        sampler.reset();
        lengths.reset();
        state = State::Steps;
        ++step;
      }
      if (step >= spec.steps.size()) return false;
      const StepSpec& st = spec.steps[step];
      switch (st.kind) {
        case StepSpecKind::Phase:
          out.kind = StepKind::Phase;
          out.name = st.phase.name;
          sampler = std::make_unique<KeySampler>(st.phase.keys, scramble_seed(spec.seed));
          lengths = std::make_unique<RangeLengthSampler>(st.phase.range_length);
          counts = batch_op_counts(st.phase.mix, st.phase.batch_size);
          batch = 0;
          state = State::InPhase;
          return true;
        case StepSpecKind::Batch:
          if (state != State::BatchPhaseEmitted) {
            out.kind = StepKind::Phase;
            out.name = st.name;
            state = State::BatchPhaseEmitted;
            return true;
          }
          out.kind = StepKind::Batch;
          out.batch = st.batch;
          if (need_model[step]) {
            record_updates(st.batch);
            if (model.large_backlog()) model.materialize();
          }
          state = State::Steps;
          ++step;
          return true;
        case StepSpecKind::Snapshot:
        case StepSpecKind::DropSnapshot:
          out.kind = st.kind == StepSpecKind::Snapshot ? StepKind::Snapshot : StepKind::DropSnapshot;
          out.name = st.name;
          ++step;
          return true;
        case StepSpecKind::Cleanup:
          out.kind = StepKind::Cleanup;
          out.name = "cleanup";
          ++step;
          return true;
      }
    }
  }
};

GeneratedSource::GeneratedSource(WorkloadSpec spec) : impl_(std::make_unique<Impl>(std::move(spec))) {}
GeneratedSource::~GeneratedSource() = default;
const WorkloadHeader& GeneratedSource::header() const { return impl_->header; }
bool GeneratedSource::next(Step& step) { return impl_->next(step); }

// ---------------------------------------------------------------- summary

WorkloadSummary summarize_spec(const WorkloadSpec& spec) {
  WorkloadSummary s;
  s.initial = spec.initial.source == InitialSpec::Source::None    ? 0
              : spec.initial.source == InitialSpec::Source::Graph ? graph_edges(spec.initial.graph_family, spec.seed, spec.initial.graph_scale)->size()
                                                                  : spec.initial.count;
  if (mirrored_initial(spec)) s.initial *= 2;
  uint64_t inserts = 0, live = 0;
  auto add_phase = [&](PhaseSummary p, uint64_t queries_per_batch) {
    for (int t = 0; t < kNumOpTypes; ++t) s.ops[t] += p.ops[t];
    inserts += p.ops[static_cast<int>(OpType::Insert)];
    s.batches += p.batches;
    s.bounds.max_batch = std::max(s.bounds.max_batch, p.max_batch);
    s.bounds.max_queries = std::max(s.bounds.max_queries, queries_per_batch);
    s.phases.push_back(std::move(p));
  };
  for (const StepSpec& st : spec.steps) {
    switch (st.kind) {
      case StepSpecKind::Phase: {
        PhaseSummary p;
        p.name = st.phase.name;
        p.mode = st.phase.mode;
        p.snapshot = st.phase.snapshot;
        p.batches = st.phase.batches;
        p.max_batch = st.phase.batch_size;
        auto c = batch_op_counts(st.phase.mix, st.phase.batch_size);
        if (spec.undirected) {  // every update twice (mirror_updates)
          p.max_batch += c[static_cast<int>(OpType::Insert)] + c[static_cast<int>(OpType::Delete)];
          c[static_cast<int>(OpType::Insert)] *= 2;
          c[static_cast<int>(OpType::Delete)] *= 2;
        }
        for (int t = 0; t < kNumOpTypes; ++t) p.ops[t] = c[t] * st.phase.batches;
        add_phase(std::move(p), non_inserts(c) - c[static_cast<int>(OpType::Delete)]);
        break;
      }
      case StepSpecKind::Batch: {
        PhaseSummary p;
        p.name = st.name;
        p.mode = st.batch.mode;
        p.snapshot = st.batch.snapshot;
        p.batches = 1;
        p.max_batch = st.batch.size();
        for (OpType t : st.batch.types) ++p.ops[static_cast<int>(t)];
        const uint64_t queries = p.max_batch - p.ops[static_cast<int>(OpType::Insert)] -
                                 p.ops[static_cast<int>(OpType::Delete)];
        add_phase(std::move(p), queries);
        break;
      }
      case StepSpecKind::Snapshot:
        s.snapshot_steps.push_back("snapshot " + st.name);
        s.bounds.max_snapshots = std::max(s.bounds.max_snapshots, ++live);
        break;
      case StepSpecKind::DropSnapshot:
        s.snapshot_steps.push_back("drop_snapshot " + st.name);
        --live;
        break;
      case StepSpecKind::Cleanup:
        ++s.cleanups;
        break;
    }
  }
  set_resident_bounds(s.bounds, s.initial, inserts, spec.key_type);
  return s;
}

}  // namespace gpudict
