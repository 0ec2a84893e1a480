// open_workload / summarize_workload: the one entry point from a workload
// file to its steps, whatever the file's kind (docs/workload-format.md).
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "core/common/errors.hpp"
#include "workloads/generator.hpp"
#include "workloads/graph_file.hpp"
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
  WorkloadSpec spec = parse_workload_spec(path, opts.widths);
  if (opts.has_seed_override) spec.seed = opts.seed_override;
  return spec;
}

// Traces and key files carry their widths in their data.
void refuse_width_override(const std::string& path, const OpenOptions& opts) {
  if (opts.widths.key_type || opts.widths.value_type)
    throw InputError(path + ": key and value types can be overridden for YAML workloads only (a trace or key "
                            "file's widths are those of its data)");
}

}  // namespace

void check_workload_file(const std::string& path) {
  static const char* const kExpected = "a YAML workload, an operation trace, a graph file or a key file";
  std::error_code ec;
  const auto st = std::filesystem::status(path, ec);
  if (st.type() == std::filesystem::file_type::not_found) throw InputError(path + ": no such file (" + kExpected + ")");
  if (ec) throw InputError(path + ": cannot access: " + ec.message() + " (" + kExpected + ")");
  if (std::filesystem::is_directory(st)) throw InputError(path + ": is a directory (" + kExpected + ")");
  // Not opened when it is not a regular file: a FIFO without a writer would block.
  if (std::filesystem::is_regular_file(st)) {
    errno = 0;
    std::ifstream in(path, std::ios::binary);
    if (!in)
      throw InputError(path + ": cannot open" + (errno ? std::string(": ") + std::strerror(errno) : std::string()) +
                       " (a readable YAML workload, operation trace, graph file or key file)");
  }
}

std::unique_ptr<StepSource> open_workload(const std::string& path, const OpenOptions& opts) {
  check_workload_file(path);
  if (is_yaml_path(path)) return std::make_unique<GeneratedSource>(load_spec(path, opts));
  refuse_width_override(path, opts);
  if (is_graph_file(path)) return open_graph_file_workload(path);
  if (is_trace_file(path)) return std::make_unique<TraceSource>(path);
  return open_key_file_workload(path, opts);
}

WorkloadSummary summarize_workload(const std::string& path, const OpenOptions& opts) {
  check_workload_file(path);
  if (is_yaml_path(path)) return summarize_spec(load_spec(path, opts));
  refuse_width_override(path, opts);
  if (is_graph_file(path)) return summarize_graph_file_workload(path);
  if (is_trace_file(path)) return summarize_trace(path);
  return summarize_key_file_workload(path, opts);
}

void check_initial_contents(const std::string& path, const OpenOptions& opts) {
  if (!is_yaml_path(path)) return;
  const WorkloadSpec spec = load_spec(path, opts);
  if (initial_can_fail(spec.initial)) generate_initial(spec);  // what a run's Initial step does, errors included
}

}  // namespace gpudict
