#include "workloads/sharding.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <stdexcept>
#include <utility>

#include "workloads/parallel.hpp"
#include "workloads/shard_threads.hpp"
#include "core/common/errors.hpp"

namespace gpudict {

namespace {

class ShardedDictionary final : public Dictionary {
 public:
  explicit ShardedDictionary(ShardSetup setup)
      : setup_(std::move(setup)),
        n_(static_cast<uint32_t>(setup_.devices.size())),
        domain_max_(key_domain_max(setup_.key_type)),
        threads_(n_, setup_.enter),
        shards_(n_),
        sub_(n_),
        res_(n_),
        times_(n_) {
    try {
      each([&](uint32_t s) { shards_[s] = setup_.make(s); });
    } catch (...) {
      release();  // the shards made, each on its own device
      throw;
    }
    caps_ = shards_[0]->caps();
    partition_ = caps_.ordered ? even_range_partition(n_, domain_max_) : hash_partition(n_);
  }
  ~ShardedDictionary() override { release(); }
  ShardedDictionary(const ShardedDictionary&) = delete;
  ShardedDictionary& operator=(const ShardedDictionary&) = delete;

  const Capabilities& caps() const override { return caps_; }

  Params parameters() const override {
    Params p = shards_[0]->parameters();
    std::string devices;
    for (const auto& d : setup_.devices) devices += (devices.empty() ? "" : ",") + d;
    p.emplace_back("shards", std::to_string(n_));
    p.emplace_back("partition", caps_.ordered ? "key range" : "hash");
    p.emplace_back("shard-devices", devices);
    return p;
  }

  // The need of the device that holds the most: each shard sized for an
  // even share of the workload with a quarter more for uneven shards (the
  // structures allocate as they grow; this is the check before the run).
  uint64_t device_bytes_needed(const WorkloadBounds& b) const override {
    auto share = [&](uint64_t x) { return std::min(x, (x + n_ - 1) / n_ + (x + n_ - 1) / n_ / 4); };
    WorkloadBounds part = b;
    part.max_resident = share(b.max_resident);
    part.max_inserted = share(b.max_inserted);
    part.max_batch = share(b.max_batch);
    part.max_queries = share(b.max_queries);
    std::vector<uint64_t> need(n_);
    each([&](uint32_t s) { need[s] = shards_[s]->device_bytes_needed(part); });
    std::map<std::string, uint64_t> by_device;
    for (uint32_t s = 0; s < n_; ++s) by_device[setup_.devices[s]] += need[s];
    uint64_t most = 0;
    for (const auto& [device, bytes] : by_device) most = std::max(most, bytes);
    return most;
  }

  void build(const KeyValues& initial, DeviceTime& t) override {
    if (initial.keys.size() != initial.values.size())
      throw InputError(setup_.structure + ": initial keys and values differ in length");
    // The boundaries are chosen once, before anything is stored: a later
    // build keeps them, so snapshots taken before it stay readable. (An
    // empty build leaves the choice to the first batch.)
    if (!started_ && caps_.ordered) partition_ = sampled_range_partition(initial.keys, n_, domain_max_);
    if (initial.size() == 0 && !started_) {
      run_timed(t, [&](uint32_t s, DeviceTime& ts) { shards_[s]->build(KeyValues{}, ts); });
      return;
    }
    started_ = true;
    // Each shard takes its keys on its own thread, in order: a later
    // duplicate still wins.
    run_timed(t, [&](uint32_t s, DeviceTime& ts) {
      KeyValues part;
      for (uint64_t i = 0; i < initial.size(); ++i)
        if (partition_.owner(initial.keys[i]) == s) {
          part.keys.push_back(initial.keys[i]);
          part.values.push_back(initial.values[i]);
        }
      shards_[s]->build(part, ts);
    });
  }

  void execute(const Batch& batch, BatchResults& r, DeviceTime& t) override {
    // With no initial keys, the first batch's keys place the boundaries
    // (nothing is stored yet): a workload that grows from empty over a
    // narrow span of the domain still spreads over the shards.
    if (!started_ && caps_.ordered) partition_ = sampled_range_partition(batch.keys, n_, domain_max_);
    started_ = true;
    split(batch);
    run_timed(t, [&](uint32_t s, DeviceTime& ts) { shards_[s]->execute(sub_[s], res_[s], ts); });
    merge(batch, r);
  }

  void snapshot(const std::string& name, DeviceTime& t) override {
    started_ = true;
    run_timed(t, [&](uint32_t s, DeviceTime& ts) { shards_[s]->snapshot(name, ts); });
  }
  void drop_snapshot(const std::string& name) override {
    each([&](uint32_t s) { shards_[s]->drop_snapshot(name); });
  }
  void cleanup(DeviceTime& t) override {
    run_timed(t, [&](uint32_t s, DeviceTime& ts) { shards_[s]->cleanup(ts); });
  }

  Stats stats() const override {
    std::vector<Stats> per(n_);
    each([&](uint32_t s) { per[s] = shards_[s]->stats(); });
    Stats total;
    std::string keys;
    for (uint32_t s = 0; s < n_; ++s) {
      total.size += per[s].size;
      total.device_bytes += per[s].device_bytes;
      keys += (s ? "," : "") + std::to_string(per[s].size);
    }
    total.extra.emplace_back("shard-keys", keys);
    for (uint32_t s = 0; s < n_; ++s)
      for (auto& [name, value] : per[s].extra) total.extra.emplace_back(fmt::format("shard{}-{}", s, name), value);
    return total;
  }
  uint64_t live_keys() const override {
    std::vector<uint64_t> per(n_);
    each([&](uint32_t s) { per[s] = shards_[s]->live_keys(); });
    uint64_t total = 0;
    for (uint64_t k : per) total += k;
    return total;
  }
  KeyType key_type() const override { return shards_[0]->key_type(); }
  KeyType value_type() const override { return shards_[0]->value_type(); }

 private:
  // Destroys the shards, each on its own thread (its device current).
  void release() noexcept {
    try {
      threads_.run_all([&](uint32_t s) { shards_[s].reset(); });
    } catch (...) {
    }
  }

  // Runs work(s) on every shard's thread at once. A runtime failure (a CUDA
  // error, a device out of memory) names the shard and its device.
  void each(const std::function<void(uint32_t)>& work) const {
    threads_.run_all([&](uint32_t s) {
      const std::string where = setup_.devices[s] == "cpu"
                                    ? fmt::format("shard {}: ", s)
                                    : fmt::format("shard {} on device {}: ", s, setup_.devices[s]);
      try {
        work(s);
      } catch (const InputError&) {
        throw;  // the same on every shard: the workload's, not the device's
      } catch (const DeviceOutOfMemory& e) {
        throw DeviceOutOfMemory(where + e.what(), e.option());
      } catch (const RuntimeFailure& e) {
        throw RuntimeFailure(where + e.what(), e.option());
      }
    });
  }

  struct Part {
    uint32_t shard;
    uint32_t index;  // in the shard's part of the batch
  };

  // Runs work on every shard at once. A phase's time is the busiest
  // device's: the sum of its shards' times (shards on one device share it,
  // so their times add up; the sum is exact when they ran one after the
  // other and an upper bound when they overlapped), the devices in parallel.
  void run_timed(DeviceTime& t, const std::function<void(uint32_t, DeviceTime&)>& work) {
    for (auto& ts : times_) ts = DeviceTime{};
    each([&](uint32_t s) { work(s, times_[s]); });
    for (int p = 0; p < kNumPhases; ++p) {
      std::map<std::string, double> by_device;
      for (uint32_t s = 0; s < n_; ++s) by_device[setup_.devices[s]] += times_[s].ms[p];
      double busiest = 0;
      for (const auto& [device, ms] : by_device) busiest = std::max(busiest, ms);
      t.ms[p] += busiest;
    }
  }

  // f(type, key, arg, shard) for each part of operation i, in shard order.
  template <class F>
  void parts_of(const Batch& batch, uint64_t i, F&& f) const {
    const OpType type = batch.types[i];
    const uint64_t key = batch.keys[i], arg = batch.args[i];
    if ((type == OpType::Count || type == OpType::Range) && caps_.ordered && key <= arg) {
      const uint32_t s0 = partition_.owner(key), s1 = partition_.owner(arg);
      for (uint32_t s = s0; s <= s1; ++s)
        f(type, std::max(key, partition_.lowest(s)), std::min(arg, partition_.highest(s, domain_max_)), s);
    } else {
      f(type, key, arg, partition_.owner(key));
    }
  }

  // Each operation's parts into the shards' batches, in batch order within a
  // shard; parts_[part_begin_[i], part_begin_[i + 1]) are operation i's, in
  // shard order. Two passes over pieces of the batch on the host's threads
  // (count, then write at each piece's offsets), so the result is the same
  // on any number of threads.
  void split(const Batch& batch) {
    const uint64_t n = batch.size();
    if (batch.keys.size() != n || batch.args.size() != n)
      throw InputError(setup_.structure + ": batch arrays differ in length");
    const uint64_t pieces = parallel_pieces(n, uint64_t{1} << 15);
    // count[p * n_ + s]: piece p's parts for shard s; then its first index there.
    std::vector<uint64_t> count(pieces * n_, 0), piece_parts(pieces + 1, 0);
    std::vector<uint8_t> piece_successors(pieces, 0);
    parallel_each(pieces, [&](uint64_t p) {
      uint64_t* c = count.data() + p * n_;
      uint64_t parts = 0;
      for (uint64_t i = piece_begin(n, pieces, p); i < piece_begin(n, pieces, p + 1); ++i) {
        const OpType type = batch.types[i];
        if (type == OpType::VertexDelete || type == OpType::Triangles)  // (before anything changes)
          throw InputError(fmt::format("{} on {} shards: {} reaches every shard and is not supported when sharded",
                                       setup_.structure, n_, op_name(type)));
        piece_successors[p] |= type == OpType::Successor;
        parts_of(batch, i, [&](OpType, uint64_t, uint64_t, uint32_t s) {
          ++c[s];
          ++parts;
        });
      }
      piece_parts[p + 1] = parts;
    });
    std::vector<uint64_t> total(n_, 0);
    for (uint64_t p = 0; p < pieces; ++p) {
      piece_parts[p + 1] += piece_parts[p];
      for (uint32_t s = 0; s < n_; ++s) {
        const uint64_t c = count[p * n_ + s];
        count[p * n_ + s] = total[s];
        total[s] += c;
      }
    }
    const bool successors = std::any_of(piece_successors.begin(), piece_successors.end(), [](uint8_t x) { return x; });
    for (uint32_t s = 0; s < n_; ++s) {
      Batch& b = sub_[s];
      b.mode = batch.mode;
      b.snapshot = batch.snapshot;
      const uint64_t m = total[s] + (successors && s > 0);  // (each later shard's first key, below)
      b.types.resize(m);
      b.keys.resize(m);
      b.args.resize(m);
    }
    parts_.resize(piece_parts[pieces]);
    part_begin_.resize(n + 1);
    part_begin_[0] = 0;
    parallel_each(pieces, [&](uint64_t p) {
      uint64_t* next = count.data() + p * n_;
      uint64_t part = piece_parts[p];
      for (uint64_t i = piece_begin(n, pieces, p); i < piece_begin(n, pieces, p + 1); ++i) {
        parts_of(batch, i, [&](OpType type, uint64_t key, uint64_t arg, uint32_t s) {
          const uint64_t j = next[s]++;
          sub_[s].types[j] = type;
          sub_[s].keys[j] = key;
          sub_[s].args[j] = arg;
          parts_[part++] = {s, static_cast<uint32_t>(j)};
        });
        part_begin_[i + 1] = part;
      }
    });
    // Each later shard's smallest key, for the successors its predecessors
    // do not have: once per batch and shard, last in the shard's batch.
    first_key_.assign(n_, kNone);
    if (successors)
      for (uint32_t s = 1; s < n_; ++s) {
        first_key_[s] = static_cast<uint32_t>(total[s]);
        sub_[s].types[total[s]] = OpType::Successor;
        sub_[s].keys[total[s]] = partition_.lowest(s) - 1;
        sub_[s].args[total[s]] = 0;
      }
  }

  // The shards' answers in batch order: one pass for everything but the
  // ranges' pairs, which are counted, placed by a prefix sum in batch order
  // and copied, each pass on the host's threads.
  void merge(const Batch& batch, BatchResults& r) const {
    const uint64_t n = batch.size();
    r.reset(n);
    const uint64_t pieces = parallel_pieces(n, uint64_t{1} << 15);
    std::vector<uint64_t> piece_pairs(pieces + 1, 0);
    parallel_each(pieces, [&](uint64_t p) {
      uint64_t pairs_here = 0;
      for (uint64_t i = piece_begin(n, pieces, p); i < piece_begin(n, pieces, p + 1); ++i) {
        const OpType type = batch.types[i];
        if (!is_query(type)) continue;
        const Part* begin = parts_.data() + part_begin_[i];
        const Part* end = parts_.data() + part_begin_[i + 1];
        if (type == OpType::Range || type == OpType::Count) {
          uint64_t sum = 0;
          for (const Part* q = begin; q != end; ++q) sum += res_[q->shard].value[q->index];
          r.value[i] = sum;
          if (type == OpType::Range) pairs_here += sum;
          continue;
        }
        const BatchResults* sr = &res_[begin->shard];
        uint32_t j = begin->index;
        if (type == OpType::Successor && !sr->found[j]) {
          for (uint32_t next = begin->shard + 1; next < n_; ++next)
            if (first_key_[next] != kNone && res_[next].found[first_key_[next]]) {
              sr = &res_[next];
              j = first_key_[next];
              break;
            }
        }
        r.found[i] = sr->found[j];
        r.value[i] = sr->value[j];
        r.key[i] = sr->key[j];
      }
      piece_pairs[p + 1] = pairs_here;
    });
    for (uint64_t p = 0; p < pieces; ++p) piece_pairs[p + 1] += piece_pairs[p];
    if (piece_pairs[pieces] == 0) return;
    r.range_keys.resize(piece_pairs[pieces]);
    r.range_values.resize(piece_pairs[pieces]);
    parallel_each(pieces, [&](uint64_t p) {
      uint64_t at = piece_pairs[p];
      for (uint64_t i = piece_begin(n, pieces, p); i < piece_begin(n, pieces, p + 1); ++i) {
        if (batch.types[i] != OpType::Range) continue;
        r.key[i] = at;  // pairs joined in shard order: key order
        for (const Part* q = parts_.data() + part_begin_[i]; q != parts_.data() + part_begin_[i + 1]; ++q) {
          const BatchResults& sr = res_[q->shard];
          const uint64_t off = sr.key[q->index], cnt = sr.value[q->index];
          std::copy_n(sr.range_keys.begin() + off, cnt, r.range_keys.begin() + at);
          std::copy_n(sr.range_values.begin() + off, cnt, r.range_values.begin() + at);
          at += cnt;
        }
      }
    });
  }

  static constexpr uint32_t kNone = ~0u;
  ShardSetup setup_;
  uint32_t n_;
  uint64_t domain_max_;
  mutable ShardThreads threads_;
  std::vector<std::unique_ptr<Dictionary>> shards_;
  Capabilities caps_;
  shard_partition partition_;
  bool started_ = false;
  // Per batch, kept for their capacity.
  std::vector<Batch> sub_;
  std::vector<BatchResults> res_;
  std::vector<DeviceTime> times_;
  std::vector<Part> parts_;
  std::vector<uint64_t> part_begin_;
  std::vector<uint32_t> first_key_;  // per shard: the index of its smallest-key query, or kNone
};

}  // namespace

std::string sharding_refusal(const std::string& structure, const Capabilities& caps) {
  if (caps.vertex_delete || caps.triangles || caps.vertex_count_range)
    return structure + " cannot be sharded (--devices): its vertex deletes and triangle counts reach every shard";
  return {};
}

std::unique_ptr<Dictionary> make_sharded_dictionary(ShardSetup setup) {
  const auto shards = setup.devices.size();
  if (shards < 1 || shards > shard_partition::max_shards)
    throw InputError(fmt::format("--devices: {} shards; from 1 to {}", shards, shard_partition::max_shards));
  const std::string structure = setup.structure;
  auto dict = std::make_unique<ShardedDictionary>(std::move(setup));
  if (auto why = sharding_refusal(structure, dict->caps()); !why.empty()) throw InputError(why);
  return dict;
}

}  // namespace gpudict
