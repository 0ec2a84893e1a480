// `gpudict compare`: one workload on several structures, one table.
#pragma once

#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "cli/report.hpp"
#include "workloads/replay.hpp"

namespace gpudict {

struct Comparison {
  std::string workload;
  std::vector<RunReport> reports;                           // the structures that ran it, in order
  std::vector<std::pair<std::string, std::string>> skipped;  // (structure, why it could not run it)
};

// Text: a row per step and timed category, a column per structure (M ops/s
// of device time, the fastest marked), the verdicts and the structures that
// could not run it. json and csv: docs/output-formats.md, "compare".
void print_comparison(std::FILE* out, const Comparison& c, OutputFormat fmt);
// The table's rates as an SVG bar chart (--chart): a group per row with a
// rate, a bar per structure, the fastest marked.
void write_comparison_chart(std::FILE* out, const Comparison& c);

}  // namespace gpudict
