#include "cli/commands.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include <fmt/format.h>

#include "core/common/cuda_check.hpp"
#include "core/common/device_info.hpp"
#include "cli/provenance.hpp"
#include "core/common/errors.hpp"
#include "workloads/cpu_backend.hpp"
#include "workloads/replay.hpp"
#include "workloads/trace.hpp"

namespace gpudict {

namespace {

std::string build_options() {
  return fmt::format("CUDA architectures {}, {} build, nvcc {}, {}; CUDA runtime static, yaml-cpp static, fmt header-only",
                     GPUDICT_CUDA_ARCHS, GPUDICT_BUILD_TYPE, GPUDICT_CUDA_COMPILER, GPUDICT_CXX_COMPILER);
}

}  // namespace

int run_structure(const StructureInfo& info, const RunOptions& opt) {
  if (!info.make_gpu) {
    std::string built;
    for (const auto& s : structures())
      if (s.make_gpu) built += (built.empty() ? "" : ", ") + s.name;
    throw InputError(fmt::format("{} is not built yet in this version of gpudict; available: {}", info.name, built));
  }
  bool gpu = opt.backend == "gpu";
  if (opt.backend.empty()) {
    gpu = cuda_device_count() > 0;
    if (!gpu)
      std::fprintf(stderr, "gpudict: no CUDA device (%s); running on the CPU reference instead (--backend cpu)\n",
                   cuda_unavailable_reason().c_str());
  }
  if (gpu) select_device(opt.device);

  WorkloadSummary summary = summarize_workload(opt.workload, opt.open);
  std::unique_ptr<StepSource> first = open_workload(opt.workload, opt.open);

  // The configuration first: what the structure supports may depend on its
  // options (the slab hash's --mode), and both backends follow the same caps.
  StructureConfig cfg;
  cfg.options = opt.structure_options;
  cfg.device = opt.device;
  cfg.key_type = first->header().key_type;
  cfg.value_type = first->header().value_type;
  if (info.validate_options) info.validate_options(cfg);
  const Capabilities caps = info.caps_with(cfg);
  check_supported(info.name, caps, first->header(), summary);

  SourceFactory sources = [&]() {
    if (first) return std::move(first);
    return open_workload(opt.workload, opt.open);
  };
  DictionaryFactory dicts = [&]() -> std::unique_ptr<Dictionary> {
    if (gpu) return info.make_gpu(cfg);
    return make_cpu_dictionary(caps, cfg.key_type, cfg.value_type, info.name);
  };

  ReplayOptions ro;
  ro.verify = opt.verify;
  ro.repeat = opt.repeat;
  ro.results_path = opt.results;
  ro.gpu = gpu;
  if (opt.verbose) ro.progress = [](const std::string& line) { std::fprintf(stderr, "gpudict: %s\n", line.c_str()); };

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

  const Provenance provenance = collect_provenance(opt.command, gpu, opt.device);
  RunReport rep = replay(sources, dicts, summary, ro);
  rep.provenance = provenance;
  rep.structure = info.name;
  rep.backend = gpu ? "gpu" : "cpu";
  rep.device = gpu ? device_name(opt.device) : "CPU reference";
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
    fmt::print("{{\"workload\":\"{}\",\"format\":\"{}\",\"name\":\"{}\",\"key_type\":\"{}\",\"value_type\":\"{}\",\"seed\":{},"
               "\"initial\":{},\"batches\":{},\"ops\":{{{}}},\"phases\":[{}],\"snapshot_steps\":[{}],"
               "\"cleanups\":{},\"max_resident\":{},\"max_batch\":{},\"max_snapshots\":{}}}\n",
               json_escape(h.path), h.format, json_escape(h.name), type_name(h.key_type), type_name(h.value_type), h.seed,
               s.initial, s.batches, ops, phases, snaps, s.cleanups, s.bounds.max_resident, s.bounds.max_batch,
               s.bounds.max_snapshots);
    finish_output(stdout, "the summary to standard output");
    return kExitOk;
  }
  fmt::print("{}: valid {} workload '{}' ({} keys, {} values, seed {})\n", h.path, h.format, h.name,
             type_name(h.key_type), type_name(h.value_type), h.seed);
  fmt::print("initial contents: {} keys\n", s.initial);
  fmt::print("{:<20} {:<10} {:<10} {:>8} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10}\n", "phase", "mode", "snapshot",
             "batches", "max_batch", "insert", "delete", "lookup", "count", "range", "successor");
  for (const auto& p : s.phases)
    fmt::print("{:<20} {:<10} {:<10} {:>8} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10}\n", p.name, mode_name(p.mode),
               p.snapshot.empty() ? "-" : p.snapshot, p.batches, p.max_batch, p.ops[0], p.ops[1], p.ops[2], p.ops[3],
               p.ops[4], p.ops[5]);
  fmt::print("{:<20} {:<10} {:<10} {:>8} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10}\n", "total", "", "", s.batches,
             s.bounds.max_batch, s.ops[0], s.ops[1], s.ops[2], s.ops[3], s.ops[4], s.ops[5]);
  for (const auto& x : s.snapshot_steps) fmt::print("step: {}\n", x);
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
