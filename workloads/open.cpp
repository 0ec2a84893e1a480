// open_workload / summarize_workload: the one entry point from a workload
// file to its steps, whatever the file's kind (docs/workload-format.md).
#include <algorithm>
#include <cctype>
#include <filesystem>

#include "core/common/errors.hpp"
#include "workloads/generator.hpp"
#include "workloads/keyfile.hpp"
#include "workloads/spec.hpp"
#include "workloads/trace.hpp"
#include "workloads/workload.hpp"

namespace gpudict {

namespace {

bool is_yaml_path(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return ext == ".yaml" || ext == ".yml";
}

WorkloadSpec load_spec(const std::string& path, const OpenOptions& opts) {
  WorkloadSpec spec = parse_workload_spec(path);
  if (opts.has_seed_override) spec.seed = opts.seed_override;
  return spec;
}

void check_exists(const std::string& path) {
  std::error_code ec;
  const auto st = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(st))
    throw InputError(path + ": no such file (a YAML workload, an operation trace or a key file)");
  if (std::filesystem::is_directory(st))
    throw InputError(path + ": is a directory (a YAML workload, an operation trace or a key file)");
}

}  // namespace

std::unique_ptr<StepSource> open_workload(const std::string& path, const OpenOptions& opts) {
  if (is_yaml_path(path)) return std::make_unique<GeneratedSource>(load_spec(path, opts));
  check_exists(path);
  if (is_trace_file(path)) return std::make_unique<TraceSource>(path);
  return open_key_file_workload(path, opts);
}

WorkloadSummary summarize_workload(const std::string& path, const OpenOptions& opts) {
  if (is_yaml_path(path)) return summarize_spec(load_spec(path, opts));
  check_exists(path);
  if (is_trace_file(path)) return summarize_trace(path);
  return summarize_key_file_workload(path, opts);
}

void check_initial_contents(const std::string& path, const OpenOptions& opts) {
  if (!is_yaml_path(path)) return;
  const WorkloadSpec spec = load_spec(path, opts);
  if (initial_can_fail(spec.initial)) generate_initial(spec);  // what a run's Initial step does, errors included
}

}  // namespace gpudict
