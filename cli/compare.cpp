#include "cli/compare.hpp"

#include <algorithm>

#include "cli/bar_chart.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace gpudict {

namespace {

std::string q(const std::string& s) { return json_string(s); }

// One row of the table: a step's timed category, and each report's row for
// it (null where a report has none).
struct Line {
  const StepReport* step = nullptr;
  Phase phase = Phase::Build;
  uint64_t ops = 0;
  std::vector<const StepRow*> rows;  // per report
  int fastest = -1;                  // index of the report with the highest rate
};

// The lines, from the first report's steps (every report replayed the same
// workload, so the steps and categories line up by index).
std::vector<Line> lines_of(const Comparison& c) {
  std::vector<Line> lines;
  const RunReport& first = c.reports.front();
  for (size_t i = 0; i < first.steps.size(); ++i) {
    for (const StepRow& row : first.steps[i].rows) {
      Line l;
      l.step = &first.steps[i];
      l.phase = row.phase;
      l.ops = row.ops;
      double best = -1;
      for (size_t r = 0; r < c.reports.size(); ++r) {
        const StepRow* found = nullptr;
        if (i < c.reports[r].steps.size())
          for (const StepRow& x : c.reports[r].steps[i].rows)
            if (x.phase == row.phase) found = &x;
        l.rows.push_back(found);
        if (found && found->device_ms > 0 && found->ops > 0) {
          const double rate = mops(found->ops, found->device_ms);
          if (rate > best) {
            best = rate;
            l.fastest = static_cast<int>(r);
          }
        }
      }
      // Rows without work to compare (a snapshot takes no device time) name
      // no fastest.
      if (l.ops == 0 || l.phase == Phase::Snapshot) l.fastest = -1;
      lines.push_back(std::move(l));
    }
  }
  return lines;
}

// The spread of a row's rates over the repetitions, as a share of the
// median rate: (fastest rate - slowest rate) / median rate.
double rate_spread(const StepRow& row) {
  const double lo = row.min_ms(), hi = row.max_ms();
  if (lo <= 0 || hi <= 0 || row.device_ms <= 0) return 0;
  return (row.device_ms / lo - row.device_ms / hi);
}

std::string verdict_of(const RunReport& r) {
  if (!r.verified) return "not verified";
  if (r.mismatches) return fmt::format("FAILED: {} of {} results wrong", r.mismatches, r.checked);
  return fmt::format("verified, {} results", r.checked);
}

void print_text(std::FILE* out, const Comparison& c, const std::vector<Line>& lines) {
  const RunReport& first = c.reports.front();
  fmt::print(out, "gpudict compare: {} ({}, {} keys, {} values, seed {}) on {} ({} backend)\n", first.workload.path,
             first.workload.format, type_name(first.workload.key_type), type_name(first.workload.value_type),
             first.workload.seed, first.device, first.backend);
  fmt::print(out, "run: {}\n", provenance_text(first.provenance));
  const bool spread = first.repeat > 1;
  fmt::print(out, "M ops/s of {}{}; * the fastest\n\n",
             first.backend == "gpu" ? "device time" : "the CPU reference's compute time (no device: every column runs the reference)",
             spread ? fmt::format(" (median of {} repetitions, then the rates' spread: fastest - slowest, % of the median)",
                                  first.repeat)
                    : std::string());
  size_t w = 4;
  size_t wop = 10;
  for (const Line& l : lines) {
    w = std::max(w, l.step->name.size());
    wop = std::max(wop, phase_name(l.phase).size());
  }
  // Each cell's text first, so the columns fit them.
  std::vector<std::vector<std::string>> cells(lines.size());
  std::vector<size_t> cw;
  for (const RunReport& r : c.reports) cw.push_back(std::max<size_t>(12, r.structure.size() + 1));
  for (size_t i = 0; i < lines.size(); ++i)
    for (size_t r = 0; r < c.reports.size(); ++r) {
      const StepRow* row = lines[i].rows[r];
      std::string cell = "-";
      if (row) {
        cell = fmt::format("{:.1f}{}", mops(row->ops, row->device_ms), lines[i].fastest == static_cast<int>(r) ? "*" : " ");
        if (spread && row->ops > 0 && row->device_ms > 0) cell += fmt::format(" {:>3.0f}%", 100.0 * rate_spread(*row));
      }
      cw[r] = std::max(cw[r], cell.size() + 1);
      cells[i].push_back(std::move(cell));
    }
  fmt::print(out, "{:>4}  {:<{}} {:<{}} {:>11}", "step", "name", w, "op", wop, "ops");
  for (size_t r = 0; r < c.reports.size(); ++r) fmt::print(out, " {:>{}}", c.reports[r].structure, cw[r]);
  fmt::print(out, "\n");
  for (size_t i = 0; i < lines.size(); ++i) {
    const Line& l = lines[i];
    fmt::print(out, "{:>4}  {:<{}} {:<{}} {:>11}", l.step->index, l.step->name, w, phase_name(l.phase), wop, l.ops);
    for (size_t r = 0; r < c.reports.size(); ++r) fmt::print(out, " {:>{}}", cells[i][r], cw[r]);
    fmt::print(out, "\n");
  }
  fmt::print(out, "\n");
  for (const RunReport& r : c.reports)
    fmt::print(out, "{}: {:.3f} ms {}, {}\n", r.structure, r.total_device_ms, r.backend == "cpu" ? "host" : "device",
               verdict_of(r));
  for (const auto& [name, why] : c.skipped) fmt::print(out, "{}: cannot run it: {}\n", name, why);
}

void print_json(std::FILE* out, const Comparison& c, const std::vector<Line>& lines) {
  const RunReport& first = c.reports.front();
  std::string names, skipped;
  for (const RunReport& r : c.reports) names += (names.empty() ? "" : ",") + q(r.structure);
  for (const auto& [n, why] : c.skipped)
    skipped += fmt::format("{}{{\"structure\":{},\"reason\":{}}}", skipped.empty() ? "" : ",", q(n), q(why));
  fmt::print(out,
             "{{\"record\":\"compare\",\"gpudict\":\"1\",\"workload\":{},\"backend\":{},\"device\":{},\"seed\":{},"
             "\"repeat\":{},\"structures\":[{}],\"skipped\":[{}],\"provenance\":{}}}\n",
             q(first.workload.path), q(first.backend), q(first.device), first.workload.seed, first.repeat, names,
             skipped, provenance_json(first.provenance));
  for (const Line& l : lines) {
    std::string ms, ms_min, ms_max, samples, rates;
    for (size_t r = 0; r < c.reports.size(); ++r) {
      const StepRow* row = l.rows[r];
      if (!row) continue;
      const std::string key = q(c.reports[r].structure);
      const char* sep = ms.empty() ? "" : ",";
      ms += fmt::format("{}{}:{:.6f}", sep, key, row->device_ms);
      ms_min += fmt::format("{}{}:{:.6f}", sep, key, row->min_ms());
      ms_max += fmt::format("{}{}:{:.6f}", sep, key, row->max_ms());
      samples += fmt::format("{}{}:[{:.6f}]", sep, key, fmt::join(row->samples, ","));
      rates += fmt::format("{}{}:{:.3f}", sep, key, mops(row->ops, row->device_ms));
    }
    fmt::print(out,
               "{{\"record\":\"row\",\"step\":{},\"kind\":{},\"name\":{},\"op\":{},\"ops\":{},\"device_ms\":{{{}}},"
               "\"device_ms_min\":{{{}}},\"device_ms_max\":{{{}}},\"device_ms_samples\":{{{}}},\"mops\":{{{}}},\"fastest\":{}}}\n",
               l.step->index, q(l.step->kind), q(l.step->name), q(std::string(phase_name(l.phase))), l.ops, ms, ms_min,
               ms_max, samples, rates,
               l.fastest >= 0 ? q(c.reports[static_cast<size_t>(l.fastest)].structure) : std::string("null"));
  }
  for (const RunReport& r : c.reports)
    fmt::print(out,
               "{{\"record\":\"structure\",\"structure\":{},\"verified\":{},\"checked\":{},\"mismatches\":{},"
               "\"total_device_ms\":{:.6f},\"total_e2e_ms\":{:.6f},\"peak_device_bytes\":{}}}\n",
               q(r.structure), r.verified ? (r.mismatches == 0 ? "true" : "false") : "null", r.checked, r.mismatches,
               r.total_device_ms, r.total_e2e_ms, r.peak_device_bytes);
}

void print_csv(std::FILE* out, const Comparison& c, const std::vector<Line>& lines) {
  fmt::print(out, "step,kind,name,op,ops,structure,device_ms,mops,fastest,device_ms_min,device_ms_max\n");
  for (const Line& l : lines)
    for (size_t r = 0; r < c.reports.size(); ++r) {
      const StepRow* row = l.rows[r];
      if (!row) continue;
      fmt::print(out, "{},{},{},{},{},{},{:.6f},{:.3f},{},{:.6f},{:.6f}\n", l.step->index, csv_field(l.step->kind),
                 csv_field(l.step->name), phase_name(l.phase), l.ops, csv_field(c.reports[r].structure), row->device_ms,
                 mops(row->ops, row->device_ms), l.fastest == static_cast<int>(r) ? "true" : "false", row->min_ms(),
                 row->max_ms());
    }
}

}  // namespace

void write_comparison_chart(std::FILE* out, const Comparison& c) {
  const RunReport& first = c.reports.front();
  BarChart chart;
  chart.title = fmt::format("gpudict compare {}", first.workload.path);
  chart.subtitle = fmt::format("{}{}", first.device,
                               first.repeat > 1 ? fmt::format(", median of {} repetitions", first.repeat) : std::string());
  chart.y_label = first.backend == "gpu" ? "M ops/s of device time" : "M ops/s of the CPU reference";
  for (const RunReport& r : c.reports) chart.series.push_back(r.structure);
  for (const Line& l : lines_of(c)) {
    if (l.ops == 0 || l.phase == Phase::Snapshot || l.phase == Phase::Cleanup) continue;  // no rate to draw
    BarChart::Group g;
    g.label = l.step->name;
    g.sublabel = phase_name(l.phase);
    for (const StepRow* row : l.rows)
      g.values.push_back(row && row->device_ms > 0 ? mops(row->ops, row->device_ms) : -1.0);
    g.marked = l.fastest;
    chart.groups.push_back(std::move(g));
  }
  write_bar_chart_svg(out, chart);
}

void print_comparison(std::FILE* out, const Comparison& c, OutputFormat fmt) {
  const std::vector<Line> lines = lines_of(c);
  switch (fmt) {
    case OutputFormat::Text: print_text(out, c, lines); break;
    case OutputFormat::Json: print_json(out, c, lines); break;
    case OutputFormat::Csv: print_csv(out, c, lines); break;
  }
}

}  // namespace gpudict
