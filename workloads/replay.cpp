#include "workloads/replay.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>

#include <fmt/format.h>

#include "workloads/cpu_backend.hpp"
#include "workloads/registry/registry.hpp"
#include "core/common/device_buffer.hpp"
#include "core/common/errors.hpp"
#include "workloads/results_writer.hpp"

namespace gpudict {

namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

bool returns_results(Phase p) {
  return p == Phase::Lookup || p == Phase::Count || p == Phase::Range || p == Phase::Successor ||
         p == Phase::Triangles || p == Phase::Concurrent;
}

// A step while it runs: per category ops, device time and verified results.
struct StepAccumulator {
  StepReport report;
  std::array<uint64_t, kNumPhases> ops{};
  std::array<uint64_t, kNumPhases> verified{};
  DeviceTime device;
};

Phase category_of(OpType t, ExecMode mode) {
  if (mode == ExecMode::Concurrent) return Phase::Concurrent;
  return is_update(t) ? Phase::Update : query_phase(t);  // (vertex deletes: their own phase)
}

// One full pass over the workload with a fresh structure.
class Pass {
 public:
  // batches_before: batches of the earlier repetitions (for the progress count).
  Pass(Dictionary& dict, Verifier* verifier, ResultsWriter* writer, const ReplayOptions& opt, uint64_t batches_before)
      : dict_(dict), verifier_(verifier), writer_(writer), opt_(opt), batches_before_(batches_before) {}

  std::vector<StepAccumulator> run(StepSource& src) {
    Step step;
    for (;;) {
      const auto tg = Clock::now();
      if (!src.next(step)) break;
      const double gen = ms_since(tg);
      switch (step.kind) {
        case StepKind::Initial:
          on_initial(step);  // frees step.initial once the structure and the reference have it
          break;
        case StepKind::Phase: open("phase", step.name); break;
        case StepKind::Batch: on_batch(step); break;
        case StepKind::Snapshot: on_snapshot(step, true); break;
        case StepKind::DropSnapshot: on_snapshot(step, false); break;
        case StepKind::Cleanup: on_cleanup(); break;
      }
      const uint64_t bytes = device_bytes_in_use();
      peak_ = std::max(peak_, bytes);
      if (!steps_.empty()) {
        steps_.back().report.device_bytes = bytes;  // after the step's latest batch
        steps_.back().report.gen_ms += gen;         // the item just handled belongs to the latest step
      }
    }
    close();
    return std::move(steps_);
  }
  uint64_t peak_device_bytes() const { return peak_; }
  const std::vector<BatchTime>& batch_times() const { return batch_times_; }

 private:
  StepAccumulator& open(const std::string& kind, const std::string& name) {
    close();
    steps_.emplace_back();
    auto& s = steps_.back();
    s.report.index = steps_.size() - 1;
    s.report.kind = kind;
    s.report.name = name;
    open_ = true;
    return s;
  }
  void close() {
    if (!open_) return;
    open_ = false;
    if (opt_.progress) {
      const auto& r = steps_.back().report;
      opt_.progress(fmt::format("step {} {} '{}' done: {} batches, {:.3f} ms end to end", r.index, r.kind, r.name,
                                r.batches, r.e2e_ms));
    }
  }

  void on_initial(Step& step) {
    auto& s = open("build", "initial");
    auto t0 = Clock::now();
    dict_.build(step.initial, s.device);
    s.report.e2e_ms += ms_since(t0);
    s.ops[static_cast<int>(Phase::Build)] += step.initial.size();
    if (verifier_) {
      const auto tv = Clock::now();
      verifier_->build(std::move(step.initial));
      s.report.verify_ms += ms_since(tv);
    }
    step.initial = KeyValues{};
    close();
  }

  void on_snapshot(const Step& step, bool take) {
    auto& s = open(take ? "snapshot" : "drop_snapshot", step.name);
    auto t0 = Clock::now();
    if (take) {
      dict_.snapshot(step.name, s.device);
      if (verifier_) verifier_->snapshot(step.name);
    } else {
      dict_.drop_snapshot(step.name);
      if (verifier_) verifier_->drop_snapshot(step.name);
    }
    s.report.e2e_ms += ms_since(t0);
    if (take) s.ops[static_cast<int>(Phase::Snapshot)] += 1;
    close();
  }

  void on_cleanup() {
    auto& s = open("cleanup", "cleanup");
    s.report.before = dict_.stats().extra;
    auto t0 = Clock::now();
    dict_.cleanup(s.device);
    s.report.e2e_ms += ms_since(t0);
    s.report.after = dict_.stats().extra;
    s.ops[static_cast<int>(Phase::Cleanup)] += 1;
    close();
  }

  void on_batch(const Step& step) {
    if (!open_ || steps_.back().report.kind != "phase") open("phase", "batches");
    auto& s = steps_.back();
    const Batch& b = step.batch;
    if (s.report.batches == 0) {
      s.report.mode = b.mode;
      s.report.snapshot = b.snapshot;
    }
    s.report.batches += 1;
    std::array<uint64_t, kNumPhases> batch_ops{};
    for (OpType t : b.types) {
      s.report.ops[static_cast<int>(t)] += 1;
      batch_ops[static_cast<int>(category_of(t, b.mode))] += 1;
    }
    for (int p = 0; p < kNumPhases; ++p) s.ops[p] += batch_ops[p];

    refuse_unsupported(dict_.caps(), opt_.structure, b, batch_index_);
    const DeviceTime before = s.device;
    auto t0 = Clock::now();
    dict_.execute(b, results_, s.device);
    s.report.e2e_ms += ms_since(t0);
    BatchTime bt;
    bt.batch = batch_index_;
    bt.step = s.report.index;
    bt.ops = b.size();
    for (OpType t : b.types) bt.updates += is_update(t) ? 1 : 0;
    for (int p = 0; p < kNumPhases; ++p) bt.device_ms += s.device.ms[p] - before.ms[p];
    batch_times_.push_back(bt);

    if (verifier_) {
      const auto tv = Clock::now();
      uint64_t before = verifier_->mismatches();
      size_t listed_before = verifier_->first_mismatches().size();
      verifier_->check_batch(batch_index_, b, results_);
      uint64_t bad = verifier_->mismatches() - before;
      s.report.mismatches += bad;
      // Verified results per category: the batch's queries minus its mismatches,
      // attributed by the mismatches' types (any not listed go to the largest).
      std::array<uint64_t, kNumPhases> bad_by{};
      const auto& listed = verifier_->first_mismatches();
      uint64_t attributed = 0;
      for (size_t i = listed_before; i < listed.size(); ++i, ++attributed)
        bad_by[static_cast<int>(category_of(listed[i].type, b.mode))] += 1;
      if (attributed < bad) {
        int largest = static_cast<int>(Phase::Concurrent);
        for (int p = 0; p < kNumPhases; ++p)
          if (returns_results(static_cast<Phase>(p)) && batch_ops[p] > batch_ops[largest]) largest = p;
        bad_by[largest] += bad - attributed;
      }
      for (int p = 0; p < kNumPhases; ++p) {
        if (!returns_results(static_cast<Phase>(p))) continue;
        uint64_t results = batch_ops[p];
        if (p == static_cast<int>(Phase::Concurrent)) {  // updates of a concurrent batch return nothing
          for (OpType t : b.types) results -= is_update(t) ? 1 : 0;
        }
        s.verified[p] += results - std::min(results, bad_by[p]);
      }
      if (dict_.caps().exact_size) {  // the structure's own count of live keys
        const uint64_t m = verifier_->mismatches();
        verifier_->check_size(batch_index_, dict_.live_keys());
        s.report.mismatches += verifier_->mismatches() - m;
      }
      s.report.verify_ms += ms_since(tv);
    }
    if (writer_) writer_->write_batch(batch_index_, b, results_);
    ++batch_index_;
    if (opt_.batch_done) opt_.batch_done(batches_before_ + batch_index_, s.report.name);
  }

  Dictionary& dict_;
  Verifier* verifier_;
  ResultsWriter* writer_;
  const ReplayOptions& opt_;
  std::vector<StepAccumulator> steps_;
  BatchResults results_;
  bool open_ = false;
  uint64_t batches_before_ = 0;
  uint64_t batch_index_ = 0;
  uint64_t peak_ = 0;
  std::vector<BatchTime> batch_times_;
};

std::string op_list(const std::array<uint64_t, kNumOpTypes>& ops) {
  std::string s;
  for (OpType t : kAllOpTypes)
    if (ops[static_cast<int>(t)]) s += (s.empty() ? "" : ", ") + std::string(op_name(t));
  return s;
}

}  // namespace

void check_supported(const std::string& structure, const Capabilities& caps, const WorkloadHeader& header,
                     const WorkloadSummary& summary) {
  if (!caps.supports(header.key_type) || !caps.supports_value(header.value_type)) {
    auto list = [](const std::vector<KeyType>& types) {
      std::string s;
      for (KeyType k : types) s += (s.empty() ? "" : ", ") + std::string(type_name(k));
      return s;
    };
    const std::string widths = caps.value_types.empty()
                                   ? "its keys and values: " + list(caps.key_types)
                                   : "its keys: " + list(caps.key_types) + "; values: " + list(caps.value_types);
    throw InputError(fmt::format("{}: {} keys with {} values are not supported by {} ({})", header.path,
                                 type_name(header.key_type), type_name(header.value_type), structure, widths));
  }
  for (OpType t : kAllOpTypes) {
    uint64_t n = summary.ops[static_cast<int>(t)];
    if (n && !caps.supports(t))
      throw InputError(fmt::format("{}: {} does not support {} operations (the workload has {}); structures that do: {}",
                                   header.path, structure, op_name(t), n, structures_supporting(t)));
  }
  bool uses_snapshots = !summary.snapshot_steps.empty();
  for (const auto& p : summary.phases) uses_snapshots |= !p.snapshot.empty();
  if (uses_snapshots && !caps.snapshots) {
    std::string who;
    for (const auto& s : structures())
      if (s.make_gpu && s.caps.snapshots) who += (who.empty() ? "" : ", ") + s.name;
    throw InputError(fmt::format("{}: {} does not support snapshots; structures that do: {}", header.path, structure,
                                 who.empty() ? "none yet" : who));
  }
  (void)op_list;
}

RunReport replay(const SourceFactory& open_source, const DictionaryFactory& make_dictionary,
                 const WorkloadSummary& summary, const ReplayOptions& opt) {
  const auto t_wall = Clock::now();
  RunReport rep;
  rep.repeat = std::max(1, opt.repeat);
  uint64_t batches_done = 0;
  rep.verified = opt.verify;
  std::vector<std::vector<StepAccumulator>> passes;
  std::vector<std::vector<BatchTime>> batch_passes;

  for (int r = 0; r < rep.repeat; ++r) {
    auto src = open_source();
    auto dict = make_dictionary();
    if (r == 0) {
      rep.workload = src->header();
      rep.parameters = dict->parameters();
      if (width_bytes(rep.workload.key_type) > width_bytes(dict->key_type()) ||
          width_bytes(rep.workload.value_type) > width_bytes(dict->value_type()))
        throw InputError(fmt::format("{}: the workload has {} keys and {} values; the structure was made for {} keys "
                                     "and {} values (make it with the workload's widths)",
                                     rep.workload.path, type_name(rep.workload.key_type),
                                     type_name(rep.workload.value_type), type_name(dict->key_type()),
                                     type_name(dict->value_type())));
      if (opt.gpu) {
        uint64_t need = dict->device_bytes_needed(summary.bounds), free_b = 0, total_b = 0;
        device_memory_info(free_b, total_b);
        if (need > free_b)
          throw RuntimeFailure(fmt::format("out of device memory: needs {}, free {} (workload {}: up to {} keys "
                                           "resident, {} inserted in all, batches of up to {})",
                                           format_bytes(need), format_bytes(free_b), rep.workload.path,
                                           summary.bounds.max_resident, summary.bounds.max_inserted,
                                           summary.bounds.max_batch));
      }
    }
    std::unique_ptr<Verifier> verifier;
    if (r == 0 && opt.verify)
      verifier = std::make_unique<Verifier>(rep.workload.key_type, rep.workload.value_type,
                                            dict->caps().phased_duplicates, dict->caps().semantics);
    if (verifier) verifier->set_concurrent_queries_first(dict->caps().concurrent_queries_first);
    std::unique_ptr<ResultsWriter> writer;
    if (r == 0 && !opt.results_path.empty()) writer = std::make_unique<ResultsWriter>(opt.results_path, opt.results_comment);

    if (opt.progress && rep.repeat > 1) opt.progress(fmt::format("repetition {} of {}", r + 1, rep.repeat));
    Pass pass(*dict, verifier.get(), writer.get(), opt, batches_done);
    passes.push_back(pass.run(*src));
    batches_done += pass.batch_times().size();
    if (writer) writer->finish();
    batch_passes.push_back(pass.batch_times());
    rep.peak_device_bytes = std::max(rep.peak_device_bytes, pass.peak_device_bytes());
    if (r == 0) {
      rep.final_stats = dict->stats();
      rep.final_device_bytes = device_bytes_in_use();
      if (verifier) {
        rep.checked = verifier->checked();
        rep.mismatches = verifier->mismatches();
        rep.first_mismatches = verifier->first_mismatches();
      }
    }
  }

  // Median over repetitions, step by step (every pass replays the same steps).
  const auto& first = passes.front();
  for (size_t i = 0; i < first.size(); ++i) {
    StepReport s = first[i].report;
    std::vector<double> e2e;
    for (const auto& p : passes) e2e.push_back(p.at(i).report.e2e_ms);
    s.e2e_ms = median(e2e);
    for (int ph = 0; ph < kNumPhases; ++ph) {
      std::vector<double> dev;
      for (const auto& p : passes) dev.push_back(p.at(i).device.ms[ph]);
      StepRow row;
      row.phase = static_cast<Phase>(ph);
      row.ops = first[i].ops[ph];
      row.verified = first[i].verified[ph];
      row.has_results = returns_results(row.phase);
      row.device_ms = median(dev);
      row.samples = dev;
      if (row.ops == 0 && row.device_ms == 0) continue;
      s.rows.push_back(row);
      rep.total_device_ms += row.device_ms;
    }
    rep.total_e2e_ms += s.e2e_ms;
    rep.total_gen_ms += s.gen_ms;
    rep.total_verify_ms += s.verify_ms;
    rep.steps.push_back(std::move(s));
  }
  rep.batch_times = batch_passes.front();
  for (size_t i = 0; i < rep.batch_times.size(); ++i) {
    std::vector<double> dev;
    for (const auto& p : batch_passes) dev.push_back(p.at(i).device_ms);
    rep.batch_times[i].device_ms = median(dev);
  }
  rep.wall_ms = ms_since(t_wall);
  return rep;
}

}  // namespace gpudict
