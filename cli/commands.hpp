// The subcommands' bodies, separate from the CLI11 wiring in app.cpp.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "cli/report.hpp"
#include "workloads/registry/registry.hpp"
#include "workloads/workload.hpp"

namespace gpudict {

struct RunOptions {
  std::string workload;
  std::string backend;  // "gpu", "cpu", or "" (gpu when a device exists)
  OutputFormat format = OutputFormat::Text;
  bool verify = true;
  OpenOptions open;
  int repeat = 1;
  int device = 0;            // the device, or the first of --devices
  std::vector<int> devices;  // --devices: one shard per entry; empty: not sharded
  std::string results;
  bool results_comment = false;  // --results-comment
  std::string batch_times;  // CSV of per-batch device times
  std::string chart;        // compare: the rates as an SVG bar chart
  bool quiet = false;
  bool verbose = false;
  bool progress = false;  // --progress: the live progress line even when stderr is not a terminal
  std::map<std::string, std::string> structure_options;
  std::string command;  // the command line, for the report's provenance
  std::vector<std::string> given_structure_options;  // those set on the command line (names)
};

int run_structure(const StructureInfo& info, const RunOptions& opt);
// One workload on every built structure (or those named), each with its
// default options; a structure that cannot run it is listed with the reason.
int run_compare(const std::vector<std::string>& structures, const RunOptions& opt);
int run_check(const std::string& workload, const OpenOptions& open, OutputFormat format);
int run_gen(const std::string& workload, const OpenOptions& open, const std::string& out_dir, bool quiet);
int run_info(OutputFormat format);

}  // namespace gpudict
