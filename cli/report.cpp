#include "cli/report.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/common/cuda_check.hpp"
#include "core/common/errors.hpp"

namespace gpudict {

namespace {


std::string q(const std::string& s) { return json_string(s); }

// A parameter's or figure's value: a JSON number when the text is one
// (decimal, as the structures print them), else a string.
std::string json_value(const std::string& v) {
  size_t i = 0;
  if (i < v.size() && v[i] == '-') ++i;
  const size_t digits = i;
  while (i < v.size() && v[i] >= '0' && v[i] <= '9') ++i;
  if (i == digits || (v[digits] == '0' && i - digits > 1)) return q(v);  // no digits, or a leading zero
  if (i < v.size() && v[i] == '.') {
    const size_t frac = ++i;
    while (i < v.size() && v[i] >= '0' && v[i] <= '9') ++i;
    if (i == frac) return q(v);
  }
  return i == v.size() ? v : q(v);
}


std::string params_text(const Params& p) {
  std::string s;
  for (const auto& [k, v] : p) s += (s.empty() ? "" : ", ") + k + "=" + v;
  return s;
}

std::string verdict(const RunReport& rep) {
  if (!rep.verified) return "not verified (--no-verify)";
  if (rep.mismatches == 0) return fmt::format("verified: {} results checked, 0 mismatches", rep.checked);
  return fmt::format("VERIFICATION FAILED: {} of {} results wrong", rep.mismatches, rep.checked);
}

void print_text(std::FILE* out, const RunReport& r) {
  fmt::print(out, "gpudict {} on {} ({} backend)\n", r.structure, r.device, r.backend);
  if (!r.provenance.version.empty()) fmt::print(out, "run: {}\n", provenance_text(r.provenance));
  fmt::print(out, "workload: {} ({}, {} keys, {} values, seed {}{})\n", r.workload.path, r.workload.format,
             type_name(r.workload.key_type), type_name(r.workload.value_type), r.workload.seed,
             r.workload.undirected ? ", undirected" : "");
  if (!r.parameters.empty()) fmt::print(out, "parameters: {}\n", params_text(r.parameters));
  // The CPU backend has no device: its times are the reference's host time.
  const bool host = r.backend == "cpu";
  const bool spread = r.repeat > 1;
  if (spread) fmt::print(out, "times: median of {} repetitions; min-max: the fastest and slowest\n", r.repeat);
  size_t w = 4;  // the name column fits the longest name
  size_t wop = 10;  // the op column fits the longest category name shown
  for (const auto& s : r.steps) {
    w = std::max(w, s.name.size() + (s.snapshot.empty() ? 0 : s.snapshot.size() + 1));
    for (const auto& row : s.rows) wop = std::max(wop, phase_name(row.phase).size());
  }
  fmt::print(out, "\n{:>4}  {:<13} {:<{}} {:<10} {:<{}} {:>11} {:>11} {:>11} {:>10} {:>10}{}\n", "step", "kind", "name",
             w, "mode", "op", wop, "ops", "verified", host ? "host_ms" : "device_ms", "Mops/s", "e2e_ms",
             spread ? fmt::format(" {:>17}", "min-max") : std::string());
  for (const auto& s : r.steps) {
    std::string mode = s.kind == "phase" ? std::string(mode_name(s.mode)) : "-";
    std::string name = s.name + (s.snapshot.empty() ? "" : "@" + s.snapshot);
    if (s.rows.empty()) {
      fmt::print(out, "{:>4}  {:<13} {:<{}} {:<10} {:<{}} {:>11} {:>11} {:>11} {:>10} {:>10.3f}\n", s.index, s.kind,
                 name, w, mode, "-", wop, "-", "-", "-", "-", s.e2e_ms);
      continue;
    }
    bool first = true;
    for (const auto& row : s.rows) {
      std::string ver = row.has_results && r.verified ? std::to_string(row.verified) : "-";
      std::string e2e = first ? fmt::format("{:.3f}", s.e2e_ms) : "";
      std::string range;
      if (spread && !row.samples.empty())
        range = fmt::format(" {:>17}", fmt::format("{:.3f}-{:.3f}", row.min_ms(), row.max_ms()));
      fmt::print(out, "{:>4}  {:<13} {:<{}} {:<10} {:<{}} {:>11} {:>11} {:>11.3f} {:>10.1f} {:>10}{}\n",
                 first ? std::to_string(s.index) : "", first ? s.kind : "", first ? name : "", w, first ? mode : "",
                 phase_name(row.phase), wop, row.ops, ver, row.device_ms, mops(row.ops, row.device_ms), e2e, range);
      first = false;
    }
  }
  for (const auto& s : r.steps)
    if (s.kind == "cleanup")
      fmt::print(out, "\ncleanup at step {}: before {}\n{:>{}}after  {}", s.index, params_text(s.before), "",
                 12 + std::to_string(s.index).size(), params_text(s.after));
  if (host)
    fmt::print(out, "\ntotal: {:.3f} ms host (the CPU reference), {:.3f} ms end to end; final size {} keys",
               r.total_device_ms, r.total_e2e_ms, r.final_stats.size);
  else
    fmt::print(out, "\ntotal: {:.3f} ms device, {:.3f} ms end to end; device memory peak {}; final size {} keys",
               r.total_device_ms, r.total_e2e_ms, format_bytes(r.peak_device_bytes), r.final_stats.size);
  if (!r.final_stats.extra.empty()) fmt::print(out, " ({})", params_text(r.final_stats.extra));
  fmt::print(out, "\nwall: {:.3f} s in all; host: {:.3f} s generating or reading operations, {:.3f} s verifying",
             r.wall_ms / 1e3, r.total_gen_ms / 1e3, r.total_verify_ms / 1e3);
  if (r.repeat > 1) fmt::print(out, " (first repetition)");
  if (r.peak_host_bytes) fmt::print(out, "; host memory peak {}", format_bytes(r.peak_host_bytes));
  fmt::print(out, "\n{}\n", verdict(r));
}

void print_json_run_and_steps(std::FILE* out, const RunReport& r) {
  std::string params;
  for (const auto& [k, v] : r.parameters) params += (params.empty() ? "" : ",") + q(k) + ":" + json_value(v);
  fmt::print(out,
             "{{\"record\":\"run\",\"gpudict\":{},\"structure\":{},\"backend\":{},\"device\":{},\"workload\":{},"
             "\"workload_format\":{},\"key_type\":{},\"value_type\":{},\"seed\":{},\"repeat\":{},\"parameters\":{{{}}},"
             "\"provenance\":{}}}\n",
             q("1"), q(r.structure), q(r.backend), q(r.device), q(r.workload.path), q(r.workload.format),
             q(std::string(type_name(r.workload.key_type))), q(std::string(type_name(r.workload.value_type))),
             r.workload.seed, r.repeat, params, provenance_json(r.provenance));
  for (const auto& s : r.steps) {
    std::string ops, rows;
    for (OpType t : kAllOpTypes)
      ops += fmt::format("{}{}:{}", ops.empty() ? "" : ",", q(std::string(op_name(t))), s.ops[static_cast<int>(t)]);
    for (const auto& row : s.rows) {
      std::string ver = row.has_results && r.verified ? std::to_string(row.verified) : "null";
      // With --repeat N: the spread and every sample besides the median.
      std::string spread;
      if (row.samples.size() > 1) {
        spread = fmt::format(",\"device_ms_min\":{:.6f},\"device_ms_max\":{:.6f},\"device_ms_samples\":[{:.6f}]",
                             row.min_ms(), row.max_ms(), fmt::join(row.samples, ","));
      }
      rows += fmt::format("{}{{\"op\":{},\"ops\":{},\"verified\":{},\"device_ms\":{:.6f},\"mops\":{:.3f}{}}}",
                          rows.empty() ? "" : ",", q(std::string(phase_name(row.phase))), row.ops, ver, row.device_ms,
                          mops(row.ops, row.device_ms), spread);
    }
    std::string around;
    if (s.kind == "cleanup") {
      auto obj = [&](const Params& p) {
        std::string o;
        for (const auto& [k, v] : p) o += (o.empty() ? "" : ",") + q(k) + ":" + json_value(v);
        return "{" + o + "}";
      };
      around = ",\"before\":" + obj(s.before) + ",\"after\":" + obj(s.after);
    }
    fmt::print(out,
               "{{\"record\":\"step\",\"step\":{},\"kind\":{},\"name\":{},\"mode\":{},\"snapshot\":{},\"batches\":{},"
               "\"ops\":{{{}}},\"rows\":[{}],\"e2e_ms\":{:.6f},\"gen_ms\":{:.6f},\"verify_ms\":{:.6f},"
               "\"mismatches\":{},\"device_bytes\":{}{}}}\n",
               s.index, q(s.kind), q(s.name), q(std::string(mode_name(s.mode))), q(s.snapshot), s.batches, ops, rows,
               s.e2e_ms, s.gen_ms, s.verify_ms, s.mismatches, s.device_bytes, around);
  }
}

void print_json_summary(std::FILE* out, const RunReport& r) {
  std::string extra;
  for (const auto& [k, v] : r.final_stats.extra) extra += (extra.empty() ? "" : ",") + q(k) + ":" + json_value(v);
  fmt::print(out,
             "{{\"record\":\"summary\",\"verified\":{},\"checked\":{},\"mismatches\":{},\"total_device_ms\":{:.6f},"
             "\"total_e2e_ms\":{:.6f},\"total_gen_ms\":{:.6f},\"total_verify_ms\":{:.6f},\"wall_ms\":{:.6f},"
             "\"peak_host_bytes\":{},\"peak_device_bytes\":{},\"final_device_bytes\":{},\"final_size\":{},"
             "\"final_stats\":{{{}}}}}\n",
             r.verified ? (r.mismatches == 0 ? "true" : "false") : "null", r.checked, r.mismatches, r.total_device_ms,
             r.total_e2e_ms, r.total_gen_ms, r.total_verify_ms, r.wall_ms, r.peak_host_bytes, r.peak_device_bytes,
             r.final_device_bytes, r.final_stats.size, extra);
}

// quiet: the summary record alone (the verdict, as JSON).
void print_json(std::FILE* out, const RunReport& r, bool quiet) {
  if (!quiet) print_json_run_and_steps(out, r);
  print_json_summary(out, r);
}

void print_csv(std::FILE* out, const RunReport& r) {
  fmt::print(out, "structure,backend,device,workload,seed,repeat,run_verified,step,kind,name,mode,snapshot,batches,op,ops,verified,device_ms,mops,e2e_ms,gen_ms,verify_ms,device_ms_min,device_ms_max\n");
  // run_verified: the run's verdict on every row (true, false, or empty with
  // --no-verify); e2e_ms, gen_ms and verify_ms are a step's figures, so only
  // its first row has them; device_ms is the median of the repetitions,
  // device_ms_min and _max their spread.
  const std::string run_verified = r.verified ? (r.mismatches == 0 ? "true" : "false") : "";
  for (const auto& s : r.steps) {
    std::string prefix = fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{}", csv_field(r.structure), r.backend,
                                     csv_field(r.device), csv_field(r.workload.path), r.workload.seed, r.repeat,
                                     run_verified, s.index, s.kind, csv_field(s.name), mode_name(s.mode),
                                     csv_field(s.snapshot), s.batches);
    const std::string step_times = fmt::format("{:.6f},{:.6f},{:.6f}", s.e2e_ms, s.gen_ms, s.verify_ms);
    if (s.rows.empty()) fmt::print(out, "{},,0,,0,0,{},0,0\n", prefix, step_times);
    bool first = true;
    for (const auto& row : s.rows) {
      std::string ver = row.has_results && r.verified ? std::to_string(row.verified) : "";
      fmt::print(out, "{},{},{},{},{:.6f},{:.3f},{},{:.6f},{:.6f}\n", prefix, phase_name(row.phase), row.ops, ver,
                 row.device_ms, mops(row.ops, row.device_ms), first ? step_times : std::string(",,"), row.min_ms(),
                 row.max_ms());
      first = false;
    }
  }
}

}  // namespace

std::string json_string(const std::string& s) { return "\"" + json_escape(s) + "\""; }

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string o = "\"";
  for (char c : s) o += c == '"' ? std::string("\"\"") : std::string(1, c);
  return o + "\"";
}

double mops(uint64_t ops, double ms) { return ms > 0 ? ops / (ms * 1e3) : 0.0; }

// The provenance line of the text report.
std::string provenance_text(const Provenance& p) {
  std::string s = fmt::format("gpudict {} ({}), {}, host {}", p.version, p.commit, p.date, p.host);
  if (p.gpu)
    s += fmt::format("; {}, {} SMs at {} MHz, memory at {} MHz, driver {}, runtime {}", p.gpu->name, p.gpu->sm_count,
                     p.gpu->sm_clock_mhz, p.gpu->mem_clock_mhz, p.driver, p.runtime);
  return s;
}

std::string provenance_json(const Provenance& p) {
  std::string s = fmt::format("\"version\":{},\"commit\":{},\"date\":{},\"host\":{},\"command\":{},\"driver\":{},"
                              "\"runtime\":{}",
                              q(p.version), q(p.commit), q(p.date), q(p.host), q(p.command), q(p.driver), q(p.runtime));
  if (p.gpu)
    s += fmt::format(",\"gpu\":{{\"name\":{},\"compute_capability\":{},\"sm_count\":{},\"sm_clock_mhz\":{},"
                     "\"mem_clock_mhz\":{}}}",
                     q(p.gpu->name), q(fmt::format("{}.{}", p.gpu->cc_major, p.gpu->cc_minor)), p.gpu->sm_count,
                     p.gpu->sm_clock_mhz, p.gpu->mem_clock_mhz);
  else
    s += ",\"gpu\":null";
  return "{" + s + "}";
}


std::string json_escape(const std::string& s) {
  std::string o;
  for (unsigned char c : s) {
    switch (c) {
      case '"': o += "\\\""; break;
      case '\\': o += "\\\\"; break;
      case '\n': o += "\\n"; break;
      case '\t': o += "\\t"; break;
      case '\r': o += "\\r"; break;
      default:
        if (c < 0x20)
          o += fmt::format("\\u{:04x}", c);
        else
          o += static_cast<char>(c);
    }
  }
  return o;
}

void print_report(std::FILE* out, const RunReport& rep, OutputFormat f, bool quiet) {
  switch (f) {
    case OutputFormat::Text:
      if (quiet)
        fmt::print(out, "{}\n", verdict(rep));
      else
        print_text(out, rep);
      break;
    case OutputFormat::Json:
      print_json(out, rep, quiet);
      break;
    case OutputFormat::Csv:
      print_csv(out, rep);  // --quiet with csv is refused before the run (app.cpp)
      break;
  }
}

void write_batch_times(std::FILE* f, const RunReport& rep) {
  fmt::print(f, "batch,step,ops,updates,device_ms,mops\n");
  for (const auto& b : rep.batch_times)
    fmt::print(f, "{},{},{},{},{:.6f},{:.3f}\n", b.batch, b.step, b.ops, b.updates, b.device_ms, mops(b.ops, b.device_ms));
}

void print_mismatches(std::FILE* err, const RunReport& rep) {
  if (rep.mismatches == 0) return;
  for (const auto& m : rep.first_mismatches) {
    if (!m.subject.empty())
      fmt::print(err, "gpudict: mismatch: batch {}, {}: expected {}, got {}\n", m.batch, m.subject, m.expected, m.got);
    else
      fmt::print(err, "gpudict: mismatch: batch {} op {} {} key {} arg {}: expected {}, got {}\n", m.batch, m.op,
                 op_name(m.type), m.key, m.arg, m.expected, m.got);
  }
  fmt::print(err, "gpudict: {} mismatches in {} checked results (first {} shown)\n", rep.mismatches, rep.checked,
             rep.first_mismatches.size());
}

}  // namespace gpudict
