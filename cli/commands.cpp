#include "cli/commands.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>

#include <fmt/format.h>

#include "core/common/cuda_check.hpp"
#include "core/common/device_info.hpp"
#include "cli/compare.hpp"
#include "cli/exit_codes.hpp"
#include "cli/progress.hpp"
#include "cli/provenance.hpp"
#include "core/common/errors.hpp"
#include "workloads/cpu_backend.hpp"
#include "workloads/graph_gen.hpp"
#include "workloads/replay.hpp"
#include "workloads/sharding.hpp"
#include "workloads/step_cache.hpp"
#include "workloads/trace.hpp"

namespace gpudict {

namespace {

std::string build_options() {
  return fmt::format("CUDA architectures {}, {} build, nvcc {}, {}; CUDA runtime static, yaml-cpp static, fmt header-only, "
                     "{}",
                     GPUDICT_CUDA_ARCHS, GPUDICT_BUILD_TYPE, GPUDICT_CUDA_COMPILER, GPUDICT_CXX_COMPILER,
                     delaunay_available() ? "Qhull static (the delaunay and road graph families)"
                                          : "no Qhull (the delaunay and road graph families are refused)");
}

}  // namespace

namespace {

// Which built structures can run a workload (their default options), and
// why not; a hash table answers count and range of one key only, which shows
// when a batch reaches it (`note`).
struct Runnable {
  std::string name;
  bool can = false;
  std::string reason, note;
};
std::vector<Runnable> runnable(const WorkloadHeader& h, const WorkloadSummary& s) {
  std::vector<Runnable> out;
  for (const auto& info : structures()) {
    if (!info.make_gpu) continue;
    Runnable r;
    r.name = info.name;
    StructureConfig cfg;
    for (const auto& o : info.options) cfg.options[o.name] = o.default_value;
    cfg.key_type = h.key_type;
    cfg.value_type = h.value_type;
    const Capabilities caps = info.caps_with(cfg);
    try {
      check_supported(info.name, caps, h, s);
      r.can = true;
      const uint64_t ranges = s.ops[static_cast<int>(OpType::Count)] + s.ops[static_cast<int>(OpType::Range)];
      if (!caps.ordered && caps.point_count_range && ranges > 0)
        r.note = " if every count and range names one key (lo == hi)";
      if (!caps.ordered && caps.vertex_count_range && ranges > 0)
        r.note = " if every count and range is a whole vertex block (range_length unit vertices, length 1)";
    } catch (const InputError& e) {
      r.reason = cli_message(e);
    }
    out.push_back(r);
  }
  return out;
}

// "is not built yet" for a planned structure.
void require_built(const StructureInfo& info) {
  if (info.make_gpu) return;
  std::string built;
  for (const auto& s : structures())
    if (s.make_gpu) built += (built.empty() ? "" : ", ") + s.name;
  throw InputError(fmt::format("{} is not built yet in this version of gpudict; available: {}", info.name, built));
}

// The most host memory the process has held (its maximum resident set, as
// the kernel counts it), 0 where getrusage fails.
uint64_t peak_resident_bytes() {
  rusage u{};
  if (getrusage(RUSAGE_SELF, &u) != 0) return 0;
  return static_cast<uint64_t>(u.ru_maxrss) * 1024;  // Linux reports KiB
}

// The backend --backend names; without one, the GPU when a device exists
// (else the CPU reference, with a notice on stderr once).
bool choose_gpu(const RunOptions& opt) {
  if (opt.backend == "gpu") return true;
  if (!opt.backend.empty()) return false;
  if (cuda_device_count() > 0) return true;
  std::fprintf(stderr, "gpudict: no CUDA device (%s); running on the CPU reference instead (--backend cpu)\n",
               cuda_unavailable_reason().c_str());
  return false;
}

// One structure on one workload: the constructor checks everything that can
// be checked before running (options, capabilities against the workload:
// InputError), run() replays it. `shared`: the workload's steps as recorded
// by the runs before (compare's structures), else null.
class StructureRun {
 public:
  StructureRun(const StructureInfo& info, const RunOptions& opt, bool gpu, StepCache* shared = nullptr)
      : info_(info), opt_(opt), gpu_(gpu), shared_(shared), summary_(summarize_workload(opt.workload, opt.open)),
        first_(open_workload(opt.workload, opt.open)) {
    // The configuration first: what the structure supports may depend on
    // its options (the slab hash's --mode), and both backends follow the
    // same caps.
    cfg_.options = opt.structure_options;
    cfg_.device = opt.device;
    cfg_.key_type = first_->header().key_type;
    cfg_.value_type = first_->header().value_type;
    if (info.validate_options) info.validate_options(cfg_);
    caps_ = info.caps_with(cfg_);
    if (!opt.devices.empty())
      if (auto why = sharding_refusal(info.name, caps_); !why.empty()) throw InputError(why);
    check_supported(info.name, caps_, first_->header(), summary_);
  }

  RunReport run() {
    // --repeat N generates (or reads) the workload once when it fits in
    // memory: the later repetitions replay the first one's steps.
    std::unique_ptr<StepCache> own;
    StepCache* cache = shared_;
    if (!cache && opt_.repeat > 1 && StepCache::fits_in_memory(summary_)) {
      own = std::make_unique<StepCache>(std::move(first_));
      cache = own.get();
    }
    SourceFactory sources = [&]() -> std::unique_ptr<StepSource> {
      if (cache) return cache->pass();
      if (first_) return std::move(first_);
      return open_workload(opt_.workload, opt_.open);
    };
    DictionaryFactory dicts = [&]() -> std::unique_ptr<Dictionary> {
      if (!opt_.devices.empty()) return make_sharded();
      if (gpu_) return info_.make_gpu(cfg_);
      return make_cpu_dictionary(caps_, cfg_.key_type, cfg_.value_type, info_.name);
    };
    ReplayOptions ro;
    ro.structure = info_.name;
    ro.verify = opt_.verify;
    ro.repeat = opt_.repeat;
    ro.results_path = opt_.results;
    ro.results_comment = opt_.results_comment;
    ro.gpu = gpu_;
    ProgressLine line(summary_.batches * static_cast<uint64_t>(std::max(1, opt_.repeat)), opt_.progress, opt_.quiet);
    if (line.enabled())
      ro.batch_done = [&line](uint64_t done, const std::string& step) { line.update(done, step); };
    if (opt_.verbose)
      ro.progress = [&line](const std::string& msg) {
        line.clear();
        std::fprintf(stderr, "gpudict: %s\n", msg.c_str());
      };
    const Provenance provenance = collect_provenance(opt_.command, gpu_, opt_.device);
    RunReport rep = replay(sources, dicts, summary_, ro);
    line.clear();
    rep.provenance = provenance;
    rep.structure = info_.name;
    rep.backend = gpu_ ? "gpu" : "cpu";
    rep.device = device_text();
    return rep;
  }

 private:
  const StructureInfo& info_;
  const RunOptions& opt_;
  bool gpu_;
  StepCache* shared_;
  WorkloadSummary summary_;
  std::unique_ptr<StepSource> first_;
  StructureConfig cfg_;
  Capabilities caps_;

  // --devices: one instance a shard, on its device (or on the CPU reference).
  std::unique_ptr<Dictionary> make_sharded() const {
    ShardSetup setup;
    setup.structure = info_.name;
    setup.key_type = cfg_.key_type;
    const std::vector<int> devices = opt_.devices;
    for (int d : devices) setup.devices.push_back(gpu_ ? std::to_string(d) : "cpu");
    if (gpu_) setup.enter = [devices](uint32_t s) { select_device(devices[s]); };
    setup.make = [this, devices](uint32_t s) -> std::unique_ptr<Dictionary> {
      if (!gpu_) return make_cpu_dictionary(caps_, cfg_.key_type, cfg_.value_type, info_.name);
      StructureConfig c = cfg_;
      c.device = devices[s];
      return info_.make_gpu(c);
    };
    return make_sharded_dictionary(std::move(setup));
  }

  // The report's device: its name, or the shards' ("2 shards on NVIDIA
  // H100 80GB HBM3 (devices 0,1)").
  std::string device_text() const {
    if (opt_.devices.empty()) return gpu_ ? device_name(opt_.device) : "CPU reference";
    const auto n = opt_.devices.size();
    if (!gpu_) return fmt::format("CPU reference ({} shards)", n);
    std::string names, list;
    for (int d : opt_.devices) {
      const std::string name = device_name(d);
      if (names.find(name) == std::string::npos) names += (names.empty() ? "" : " + ") + name;
      list += (list.empty() ? "" : ",") + std::to_string(d);
    }
    return fmt::format("{} shards on {} (devices {})", n, names, list);
  }
};

// The run's devices exist (exit 3 naming the first that does not), and the
// first is the current one.
void select_devices(const RunOptions& opt) {
  for (int d : opt.devices) select_device(d);
  select_device(opt.device);
}

}  // namespace

int run_structure(const StructureInfo& info, const RunOptions& opt) {
  const auto start = std::chrono::steady_clock::now();
  require_built(info);
  const bool gpu = choose_gpu(opt);
  if (gpu) select_devices(opt);
  StructureRun run(info, opt, gpu);  // validates the options either way
  if (!gpu && !opt.given_structure_options.empty()) {
    std::string names;
    for (const auto& n : opt.given_structure_options) names += (names.empty() ? "--" : ", --") + n;
    std::fprintf(stderr, "gpudict: the CPU reference ignores %s (options of the GPU %s)\n", names.c_str(),
                 info.name.c_str());
  }

  // --batch-times is opened before the run, as --results is (replay): a
  // path that cannot be written fails now, not after a long run; and after
  // the input's checks, so that a bad workload leaves an existing file as it was.
  // '-' is standard output, as for --results; the report then goes to
  // standard error, and only one of the two can take standard output.
  const bool times_to_stdout = opt.batch_times == "-";
  if (times_to_stdout && opt.results == "-")
    throw InputError("--results - and --batch-times - both ask for standard output: give one of them a file");
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> batch_times(nullptr, &std::fclose);
  if (!opt.batch_times.empty() && !times_to_stdout)
    batch_times.reset(open_output_file(opt.batch_times, "batch-times"));

  RunReport rep = run.run();
  // The whole command's wall time, set-up included (the report's parts add up to it).
  rep.wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  rep.peak_host_bytes = peak_resident_bytes();
  // The report goes to stdout unless the results or the batch times do.
  const bool report_to_stderr = opt.results == "-" || times_to_stdout;
  std::FILE* out = report_to_stderr ? stderr : stdout;
  print_report(out, rep, opt.format, opt.quiet);
  print_mismatches(stderr, rep);
  if (batch_times) {
    write_batch_times(batch_times.get(), rep);
    close_output(batch_times.release(), "--batch-times " + opt.batch_times);
  } else if (times_to_stdout) {
    write_batch_times(stdout, rep);
    finish_output(stdout, "--batch-times to standard output");
  }
  finish_output(out, report_to_stderr ? "the report to standard error" : "the report to standard output");
  return rep.mismatches ? kExitVerifyFailed : kExitOk;
}

int run_compare(const std::vector<std::string>& names, const RunOptions& opt) {
  std::vector<const StructureInfo*> chosen;
  if (names.empty()) {
    for (const auto& s : structures())
      if (s.make_gpu) chosen.push_back(&s);
  } else {
    for (const auto& n : names) {
      const StructureInfo* s = find_structure(n);
      if (!s) throw InputError(fmt::format("--structures: unknown structure '{}'", n));
      require_built(*s);
      chosen.push_back(s);
    }
  }
  const bool gpu = choose_gpu(opt);
  if (gpu) select_devices(opt);
  // The structures replay one generation of the workload when it fits in
  // memory (each with its own --repeat passes over the same record).
  std::unique_ptr<StepCache> shared;
  if ((chosen.size() > 1 || opt.repeat > 1) && StepCache::fits_in_memory(summarize_workload(opt.workload, opt.open)))
    shared = std::make_unique<StepCache>(open_workload(opt.workload, opt.open));
  Comparison cmp;
  cmp.workload = opt.workload;
  for (const StructureInfo* s : chosen) {
    RunOptions o = opt;
    o.structure_options.clear();
    for (const auto& spec : s->options) o.structure_options[spec.name] = spec.default_value;
    try {
      StructureRun run(*s, o, gpu, shared.get());
      if (opt.verbose) std::fprintf(stderr, "gpudict: compare: running %s\n", s->name.c_str());
      cmp.reports.push_back(run.run());
    } catch (const InputError& e) {
      // A workload the structure cannot run (an operation it lacks, or a
      // refusal when a batch reaches it): listed, not fatal.
      cmp.skipped.emplace_back(s->name, cli_message(e));
    }
  }
  if (cmp.reports.empty()) {
    std::string why;
    for (const auto& [n, r] : cmp.skipped) why += fmt::format("{}{}: {}", why.empty() ? "" : "; ", n, r);
    throw InputError("no structure can run " + opt.workload + " (" + why + ")");
  }
  print_comparison(stdout, cmp, opt.format);
  if (!opt.chart.empty()) {
    std::FILE* chart = open_output_file(opt.chart, "chart");
    write_comparison_chart(chart, cmp);
    close_output(chart, "--chart " + opt.chart);
  }
  uint64_t mismatches = 0;
  for (const RunReport& r : cmp.reports) {
    print_mismatches(stderr, r);
    mismatches += r.mismatches;
  }
  finish_output(stdout, "the comparison to standard output");
  return mismatches ? kExitVerifyFailed : kExitOk;
}

int run_check(const std::string& workload, const OpenOptions& open, OutputFormat format) {
  WorkloadSummary s = summarize_workload(workload, open);
  check_initial_contents(workload, open);
  auto src = open_workload(workload, open);
  const WorkloadHeader& h = src->header();
  if (format == OutputFormat::Json) {
    std::string phases;
    for (const auto& p : s.phases) {
      std::string ops;
      for (OpType t : kAllOpTypes)
        ops += fmt::format("{}\"{}\":{}", ops.empty() ? "" : ",", op_name(t), p.ops[static_cast<int>(t)]);
      phases += fmt::format("{}{{\"name\":\"{}\",\"mode\":\"{}\",\"snapshot\":\"{}\",\"batches\":{},\"max_batch\":{},\"ops\":{{{}}}}}",
                            phases.empty() ? "" : ",", json_escape(p.name), mode_name(p.mode), json_escape(p.snapshot),
                            p.batches, p.max_batch, ops);
    }
    std::string ops, snaps;
    for (OpType t : kAllOpTypes)
      ops += fmt::format("{}\"{}\":{}", ops.empty() ? "" : ",", op_name(t), s.ops[static_cast<int>(t)]);
    for (const auto& x : s.snapshot_steps) snaps += fmt::format("{}\"{}\"", snaps.empty() ? "" : ",", json_escape(x));
    std::string runs;
    for (const auto& r : runnable(h, s))
      runs += fmt::format("{}{{\"name\":\"{}\",\"can_run\":{},\"reason\":\"{}\"}}", runs.empty() ? "" : ",", r.name,
                          r.can ? "true" : "false", json_escape(r.can ? r.note : r.reason));
    fmt::print("{{\"workload\":\"{}\",\"format\":\"{}\",\"name\":\"{}\",\"key_type\":\"{}\",\"value_type\":\"{}\",\"seed\":{},"
               "\"initial\":{},\"batches\":{},\"ops\":{{{}}},\"phases\":[{}],\"snapshot_steps\":[{}],"
               "\"cleanups\":{},\"max_resident\":{},\"max_batch\":{},\"max_snapshots\":{},\"structures\":[{}]}}\n",
               json_escape(h.path), h.format, json_escape(h.name), type_name(h.key_type), type_name(h.value_type), h.seed,
               s.initial, s.batches, ops, phases, snaps, s.cleanups, s.bounds.max_resident, s.bounds.max_batch,
               s.bounds.max_snapshots, runs);
    finish_output(stdout, "the summary to standard output");
    return kExitOk;
  }
  fmt::print("{}: valid {} workload '{}' ({} keys, {} values, seed {}{})\n", h.path, h.format, h.name,
             type_name(h.key_type), type_name(h.value_type), h.seed, h.undirected ? ", undirected" : "");
  fmt::print("initial contents: {} keys\n", s.initial);
  // One column per operation type; the graph operations' only when the workload has them.
  std::vector<OpType> columns;
  for (OpType t : kAllOpTypes)
    if (!is_graph_op(t) || s.ops[static_cast<int>(t)] > 0) columns.push_back(t);
  auto row = [&](const std::string& name, const std::string& mode, const std::string& snapshot,
                 const std::string& batches, const std::string& max_batch, const auto& ops) {
    std::string line = fmt::format("{:<20} {:<10} {:<10} {:>8} {:>10}", name, mode, snapshot, batches, max_batch);
    for (OpType t : columns) line += fmt::format(" {:>10}", ops(t));
    fmt::print("{}\n", line);
  };
  row("phase", "mode", "snapshot", "batches", "max_batch", [](OpType t) { return std::string(op_name(t)); });
  for (const auto& p : s.phases)
    row(p.name, std::string(mode_name(p.mode)), p.snapshot.empty() ? "-" : p.snapshot, std::to_string(p.batches),
        std::to_string(p.max_batch), [&](OpType t) { return std::to_string(p.ops[static_cast<int>(t)]); });
  row("total", "", "", std::to_string(s.batches), std::to_string(s.bounds.max_batch),
      [&](OpType t) { return std::to_string(s.ops[static_cast<int>(t)]); });
  for (const auto& x : s.snapshot_steps) fmt::print("step: {}\n", x);
  for (const auto& r : runnable(h, s)) fmt::print("{}: {}\n", r.name, r.can ? std::string("can run it") + r.note : "cannot run it: " + r.reason);
  if (s.cleanups) fmt::print("cleanup steps: {}\n", s.cleanups);
  fmt::print("bounds: at most {} resident keys, batches of at most {}, at most {} snapshots alive\n",
             s.bounds.max_resident, s.bounds.max_batch, s.bounds.max_snapshots);
  finish_output(stdout, "the summary to standard output");
  return kExitOk;
}

int run_gen(const std::string& workload, const OpenOptions& open, const std::string& out_dir, bool quiet) {
  generate_to_directory(workload, open, out_dir);
  if (!quiet)
    fmt::print("wrote {0}/initial_keys.bin, {0}/initial_values.bin, {0}/trace.gdt\n", out_dir);
  finish_output(stdout, "to standard output");
  return kExitOk;
}

int run_info(OutputFormat format) {
  auto devs = describe_devices();
  std::string structs;
  if (format == OutputFormat::Json) {
    std::string d;
    for (const auto& x : devs)
      d += fmt::format("{}{{\"index\":{},\"name\":\"{}\",\"compute_capability\":\"{}.{}\",\"multiprocessors\":{},"
                       "\"total_bytes\":{},\"free_bytes\":{},\"l2_bytes\":{},\"peak_bandwidth_gbs\":{:.1f}}}",
                       d.empty() ? "" : ",", x.index, json_escape(x.name), x.cc_major, x.cc_minor, x.sm_count,
                       x.total_bytes, x.free_bytes, x.l2_bytes, x.mem_bandwidth_gbs);
    for (const auto& s : structures())
      structs += fmt::format("{}{{\"name\":\"{}\",\"built\":{}}}", structs.empty() ? "" : ",", s.name,
                             s.make_gpu ? "true" : "false");
    fmt::print("{{\"version\":\"{}\",\"driver\":\"{}\",\"runtime\":\"{}\",\"build\":\"{}\",\"devices\":[{}],"
               "\"no_device_reason\":\"{}\",\"structures\":[{}]}}\n",
               GPUDICT_VERSION, driver_version_string(), runtime_version_string(), json_escape(build_options()), d,
               devs.empty() ? json_escape(cuda_unavailable_reason()) : "", structs);
    finish_output(stdout, "to standard output");
    return kExitOk;
  }
  fmt::print("gpudict {}\nbuild: {}\n", GPUDICT_VERSION, build_options());
  fmt::print("CUDA driver: {}, runtime: {}\n", driver_version_string(), runtime_version_string());
  if (devs.empty()) fmt::print("devices: none ({}); structures run with --backend cpu\n", cuda_unavailable_reason());
  for (const auto& x : devs)
    fmt::print("device {}: {}, compute capability {}.{}, {} multiprocessors, {} memory ({} free), L2 {}, "
               "peak bandwidth {:.0f} GB/s\n",
               x.index, x.name, x.cc_major, x.cc_minor, x.sm_count, format_bytes(x.total_bytes),
               format_bytes(x.free_bytes), format_bytes(x.l2_bytes), x.mem_bandwidth_gbs);
  for (const auto& s : structures())
    structs += (structs.empty() ? "" : ", ") + s.name + (s.make_gpu ? "" : " (planned)");
  fmt::print("structures: {}\n", structs);
  finish_output(stdout, "to standard output");
  return kExitOk;
}

}  // namespace gpudict
