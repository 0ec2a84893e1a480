// The CPU backend: an ordered std::map with snapshot copies, written
// independently of the verifier's model (reference.cpp) so that each checks
// the other. Deterministic: several updates of one key in one batch resolve
// to the last update (LastWins, AnyUpdate) or to a delete if there is one,
// else the last insert (DeleteWinsElseAny). Concurrent batches run as
// updates-then-queries, resolved the same way.
#include "workloads/cpu_backend.hpp"

#include <algorithm>
#include <chrono>
#include <map>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "core/common/errors.hpp"
#include "workloads/kv_sort.hpp"

namespace gpudict {

namespace {

using Map = std::map<uint64_t, uint64_t>;

class Stopwatch {
 public:
  Stopwatch() : start_(std::chrono::steady_clock::now()) {}
  double ms() const {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_).count();
  }

 private:
  std::chrono::steady_clock::time_point start_;
};

class CpuDictionary final : public Dictionary {
 public:
  // Keys and values are held as u64 whatever the workload's widths.
  explicit CpuDictionary(const Capabilities& caps) : caps_(caps) {
    caps_.native_concurrent = false;
  }

  const Capabilities& caps() const override { return caps_; }

  Params parameters() const override { return {{"backend", "cpu-reference"}}; }

  uint64_t device_bytes_needed(const WorkloadBounds&) const override { return 0; }

  void build(const KeyValues& initial, DeviceTime& t) override {
    Stopwatch sw;
    Map m;
    for (const auto& [key, value] : sorted_last_wins(initial)) m.emplace_hint(m.end(), key, value);
    live_ = std::move(m);
    t.add(Phase::Build, sw.ms());
  }

  void execute(const Batch& batch, BatchResults& r, DeviceTime& t) override {
    r.reset(batch.size());
    const Map* target = &live_;
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
      apply_updates(batch);
      if (!concurrent) t.add(Phase::Update, sw.ms());
    }
    for (OpType type : {OpType::Lookup, OpType::Count, OpType::Range, OpType::Successor}) {
      const std::vector<uint32_t>& ops = plan.of(type);
      if (ops.empty()) continue;
      Stopwatch sw;
      for (uint32_t i : ops) run_query(*target, batch, i, r);
      if (!concurrent) t.add(query_phase(type), sw.ms());
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
    s.size = live_.size();
    s.device_bytes = 0;
    s.extra = {{"snapshots", std::to_string(snapshots_.size())}};
    return s;
  }

 private:
  void apply_updates(const Batch& batch) {
    if (caps_.phased_duplicates == DuplicateRule::DeleteWinsElseAny) {
      // Keys deleted anywhere in the batch end deleted; the others take their
      // last insert.
      std::unordered_set<uint64_t> deleted;
      for (size_t i = 0; i < batch.size(); ++i)
        if (batch.types[i] == OpType::Delete) deleted.insert(batch.keys[i]);
      for (size_t i = 0; i < batch.size(); ++i)
        if (batch.types[i] == OpType::Insert && deleted.count(batch.keys[i]) == 0)
          live_[batch.keys[i]] = batch.args[i];
      for (uint64_t k : deleted) live_.erase(k);
      return;
    }
    // LastWins and AnyUpdate: in batch order, so the last update wins.
    for (size_t i = 0; i < batch.size(); ++i) {
      if (batch.types[i] == OpType::Insert)
        live_[batch.keys[i]] = batch.args[i];
      else if (batch.types[i] == OpType::Delete)
        live_.erase(batch.keys[i]);
    }
  }

  static void run_query(const Map& m, const Batch& batch, uint32_t i, BatchResults& r) {
    const uint64_t key = batch.keys[i];
    const uint64_t arg = batch.args[i];
    switch (batch.types[i]) {
      case OpType::Lookup: {
        auto it = m.find(key);
        if (it != m.end()) {
          r.found[i] = 1;
          r.value[i] = it->second;
        }
        break;
      }
      case OpType::Count:
        if (key <= arg)
          r.value[i] = static_cast<uint64_t>(std::distance(m.lower_bound(key), m.upper_bound(arg)));
        break;
      case OpType::Range: {
        r.key[i] = r.range_keys.size();
        uint64_t n = 0;
        if (key <= arg) {
          for (auto it = m.lower_bound(key), end = m.upper_bound(arg); it != end; ++it, ++n) {
            r.range_keys.push_back(it->first);
            r.range_values.push_back(it->second);
          }
        }
        r.value[i] = n;
        break;
      }
      case OpType::Successor: {
        auto it = m.upper_bound(key);
        if (it != m.end()) {
          r.found[i] = 1;
          r.key[i] = it->first;
          r.value[i] = it->second;
        }
        break;
      }
      default: break;
    }
  }

  Capabilities caps_;
  Map live_;
  std::map<std::string, Map> snapshots_;
};

}  // namespace

std::unique_ptr<Dictionary> make_cpu_dictionary(const Capabilities& caps, KeyType /*key_type*/,
                                                KeyType /*value_type*/) {
  return std::make_unique<CpuDictionary>(caps);
}

}  // namespace gpudict
