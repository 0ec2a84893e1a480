#include "cli/app.hpp"

#include <CLI/CLI.hpp>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <memory>
#include <sstream>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <system_error>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "cli/provenance.hpp"
#include "workloads/registry/registry.hpp"
#include "core/common/errors.hpp"
#include "core/common/shard_partition.hpp"
#include "workloads/spec.hpp"
#include "workloads/workload.hpp"

namespace gpudict {

namespace {

const std::map<std::string, OutputFormat> kFormats = {
    {"text", OutputFormat::Text}, {"json", OutputFormat::Json}, {"csv", OutputFormat::Csv}};

// `example`: a workload the structure can run (examples/quickstart.yaml takes
// snapshots and asks for successors; the B-Tree has no snapshots, the hash
// tables neither and no successors; the graph takes edges, 64-bit keys).
std::string example_for(const Capabilities& caps) {
  if (caps.vertex_count_range) return "examples/graph-rmat.yaml";
  if (caps.ordered && caps.snapshots) return "examples/quickstart.yaml";
  if (caps.ordered) return "examples/mixed-concurrent.yaml";
  return "examples/hash-quickstart.yaml";
}

std::string run_footer(const std::string& name, const std::string& example) {
  return fmt::format(
      "\nExamples:\n"
      "  gpudict {0} {1}   # run and verify, text report\n"
      "  gpudict {0} {1} --format json | jq -c 'select(.record==\"step\")'\n"
      "  gpudict {0} keys.bin --backend cpu               # a key file: build, look every key up\n"
      "  gpudict {0} graph.mtx                            # a graph file: edges as u64 keys\n"
      "  gpudict {0} out/trace.gdt --repeat 5 --no-verify # a trace from gpudict gen, median of 5\n\n"
      "Exit codes: 0 all results verified, 1 verification failed, 2 bad input or usage,\n"
      "3 runtime failure (no device, out of device memory, CUDA error, output that could not be written).\n"
      "Workload format: docs/workload-format.md; report fields: docs/output-formats.md.",
      name, example);
}

// --seed: a decimal integer in [0, 2^64 - 1]. (CLI11 alone would read "-1"
// or 2^64 as 2^64 - 1, so different seeds would give the same workload.)
const CLI::Validator kSeed(
    [](std::string& v) -> std::string {
      if (v.empty() || v.find_first_not_of("0123456789") != std::string::npos)
        return "'" + v + "' is not a seed: a decimal integer from 0 to 18446744073709551615";
      errno = 0;
      (void)std::strtoull(v.c_str(), nullptr, 10);
      if (errno == ERANGE) return "'" + v + "' is larger than the largest seed, 18446744073709551615 (2^64 - 1)";
      return {};
    },
    "UINT64");

// --device: CLI::NonNegativeNumber's message quotes the largest double.
const CLI::Validator kDeviceIndex(
    [](std::string& v) -> std::string {
      if (v.empty() || v.find_first_not_of("0123456789") != std::string::npos || v.size() > 6)
        return "'" + v + "' is not a CUDA device index (0, 1, ...; 'gpudict info' lists them)";
      return {};
    },
    "INDEX");

// The width help text is wrapped to: the terminal's when stdout is one, else
// $COLUMNS, else 100; at least 60.
size_t help_width() {
  size_t w = 100;
  winsize ws{};
  if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) {
    w = ws.ws_col;
  } else if (const char* c = std::getenv("COLUMNS")) {
    const long v = std::strtol(c, nullptr, 10);
    if (v > 0) w = static_cast<size_t>(v);
  }
  return std::max<size_t>(w, 60);
}

// Wraps `text` at spaces to lines of at most `width` (existing line breaks
// kept; a word longer than a line stays whole).
std::string wrap_text(const std::string& text, size_t width) {
  std::string out, line;
  size_t at = 0;
  auto flush = [&] {
    out += line;
    line.clear();
  };
  while (at <= text.size()) {
    const size_t nl = std::min(text.find('\n', at), text.size());
    std::string para = text.substr(at, nl - at);
    size_t p = 0;
    while (p < para.size()) {
      const size_t sp = std::min(para.find(' ', p), para.size());
      const std::string word = para.substr(p, sp - p);
      if (!line.empty() && line.size() + 1 + word.size() > width) {
        flush();
        out += '\n';
      } else if (!line.empty()) {
        line += ' ';
      }
      line += word;
      p = sp + 1;
    }
    flush();
    if (nl < text.size()) out += '\n';
    at = nl + 1;
  }
  return out;
}

// The subcommand list of `gpudict --help` gives each subcommand's summary
// (the first line of its description, wrapped to the column); its own
// --help gives the whole description.
class SummaryFormatter : public CLI::Formatter {
 public:
  explicit SummaryFormatter(size_t summary_width) : summary_width_(summary_width) {}
  std::string make_subcommand(const CLI::App* sub) const override {
    std::stringstream out;
    const std::string d = sub->get_description();
    std::string first = d.substr(0, d.find("\n\n"));  // the summary paragraph
    for (char& c : first)
      if (c == '\n') c = ' ';
    CLI::detail::format_help(out, sub->get_display_name(true), wrap_text(first, summary_width_), column_width_);
    return out.str();
  }

 private:
  size_t summary_width_;
};

// Every description of the app and its subcommands wrapped to the width
// (CLI11 indents the lines after the first to the option column).
void wrap_help(CLI::App& app) {
  const size_t width = help_width();
  constexpr size_t kColumn = 30;  // CLI11's option column
  auto fmt = std::make_shared<SummaryFormatter>(width - kColumn);
  fmt->column_width(kColumn);
  app.formatter(fmt);
  auto wrap_app = [&](CLI::App* a) {
    a->description(wrap_text(a->get_description(), width));
    for (CLI::Option* o : a->get_options()) o->description(wrap_text(o->get_description(), width - kColumn));
  };
  wrap_app(&app);
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
    sub->formatter(fmt);
    wrap_app(sub);
  }
}

// --key-type / --value-type: a YAML workload at other widths.
struct WidthFlags {
  std::string key_type, value_type;  // empty: the workload's own

  void add_to(CLI::App* sub) {
    sub->add_option("--key-type", key_type, "Run a YAML workload with this key type instead of its key_type")
        ->check(CLI::IsMember({"u32", "u64"}));
    sub->add_option("--value-type", value_type, "Run a YAML workload with this value type instead of its value_type")
        ->check(CLI::IsMember({"u32", "u64"}));
  }
  WidthOverride as_override() const {
    WidthOverride w;
    if (!key_type.empty()) w.key_type = key_type == "u64" ? KeyType::U64 : KeyType::U32;
    if (!value_type.empty()) w.value_type = value_type == "u64" ? KeyType::U64 : KeyType::U32;
    return w;
  }
};

// The check a structure option's declared type asks for (OptionSpec::type):
// "{a,b}" one of the choices, "UINT..." an unsigned integer, "FLOAT..." a
// number; ranges beyond that are the structure's own check (validate_options).
// Its name stays empty so --help shows the type as declared.
CLI::Validator validator_for(const std::string& type) {
  if (!type.empty() && type.front() == '{' && type.back() == '}') {
    std::vector<std::string> choices;
    std::stringstream list(type.substr(1, type.size() - 2));
    for (std::string c; std::getline(list, c, ',');) choices.push_back(c);
    return CLI::Validator(
        [choices](std::string& v) {
          return std::find(choices.begin(), choices.end(), v) != choices.end() ? std::string() : not_a_choice(v, choices);
        },
        "");
  }
  if (type.rfind("UINT", 0) == 0)
    return CLI::Validator(
        [](std::string& v) {
          uint64_t x = 0;
          return parse_uint_text(v, x) ? std::string() : "'" + v + "' is not a non-negative integer";
        },
        "");
  if (type.rfind("FLOAT", 0) == 0)
    return CLI::Validator(
        [](std::string& v) {
          double x = 0;
          return parse_number_text(v, x) ? std::string() : "'" + v + "' is not a number";
        },
        "");
  return CLI::Validator([](std::string&) { return std::string(); }, "");
}

struct CommonFlags {
  std::string backend;
  std::string format = "text";
  bool no_verify = false;
  uint64_t seed = 0;
  std::map<std::string, CLI::Option*> seed_opts;  // per subcommand: CLI11 counts each separately
  WidthFlags widths;
  int repeat = 1;
  int device = 0;
  std::vector<int> devices;
  std::string results;
  bool results_comment = false;
  std::string batch_times;
  bool quiet = false;
  bool verbose = false;
  bool progress = false;
};

// The options of a run, on a structure subcommand and on compare.
void add_run_options(CLI::App* sub, CommonFlags& f, const std::string& name) {
  sub->add_option("--backend", f.backend, "gpu or cpu (default: gpu when a CUDA device exists, else cpu with a notice)")
      ->check(CLI::IsMember({"gpu", "cpu"}));
  sub->add_option("--format", f.format, "Report format: text (aligned table), json (JSON Lines), csv")
      ->check(CLI::IsMember({"text", "json", "csv"}))
      ->capture_default_str();
  sub->add_flag("--no-verify", f.no_verify, "Skip checking results against the CPU reference");
  f.seed_opts[name] = sub->add_option("--seed", f.seed, "Seed for generated workloads (overrides the file's `seed`)")
                          ->check(kSeed);
  f.widths.add_to(sub);
  sub->add_option("--repeat", f.repeat,
                  "Timed repetitions of the whole workload; times are the median (a structure's report also gives "
                  "the min and max, and in JSON every sample)")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  auto* device = sub->add_option("--device", f.device, "CUDA device index")->check(kDeviceIndex)->capture_default_str();
  sub->add_option("--devices", f.devices,
                  "Shard the structure over these CUDA devices, one shard per index (0,1,2,3; an index may repeat: "
                  "several shards on one device); ordered structures by key range, hash tables by key hash "
                  "(docs/sharding.md). With --backend cpu: as many shards on the CPU reference")
      ->delimiter(',')
      ->check(kDeviceIndex)
      ->expected(1, static_cast<int>(shard_partition::max_shards))
      ->excludes(device);
  sub->add_flag("-v,--verbose", f.verbose, "A line on stderr as each step ends");
  sub->add_flag("--progress", f.progress,
                "A live progress line on stderr (batches done, step, rate, time left) even when stderr is not a "
                "terminal; it is on by default on a terminal, and --quiet turns it off");
}

// The outputs of one structure's run (not compare's).
void add_run_outputs(CLI::App* sub, CommonFlags& f) {
  sub->add_option("--results", f.results,
                  "Write every query result to FILE (tab-separated; '-' for stdout, the report then goes to stderr)");
  sub->add_flag("--results-comment", f.results_comment,
                "Begin the --results file with a '# gpudict results v1' line (before the column header)");
  sub->add_option("--batch-times", f.batch_times,
                  "Write each batch's device time to FILE as CSV (batch,step,ops,updates,device_ms,mops; '-' for "
                  "stdout, the report then goes to stderr)");
  sub->add_flag("-q,--quiet", f.quiet,
                "Print only the verdict: its line (text) or the summary record (json); not with csv");
}

RunOptions run_options(const CommonFlags& f, const std::string& name, const std::string& workload, int argc,
                       char** argv) {
  RunOptions o;
  o.workload = workload;
  o.backend = f.backend;
  o.format = kFormats.at(f.format);
  o.verify = !f.no_verify;
  o.open.has_seed_override = f.seed_opts.at(name)->count() > 0;
  o.open.seed_override = f.seed;
  o.open.widths = f.widths.as_override();
  o.repeat = f.repeat;
  o.device = f.devices.empty() ? f.device : f.devices.front();
  o.devices = f.devices;
  o.results = f.results;
  o.results_comment = f.results_comment;
  o.batch_times = f.batch_times;
  o.quiet = f.quiet;
  o.verbose = f.verbose;
  o.progress = f.progress;
  o.command = command_line(argc, argv);
  return o;
}

}  // namespace

int run_cli(int argc, char** argv) {
  CLI::App app{
      "gpudict: dynamic dictionary data structures on NVIDIA GPUs.\n"
      "Run a workload (YAML, binary key file or operation trace) against a structure; every result is\n"
      "verified against a CPU reference and the throughput is reported.",
      "gpudict"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("gpudict ") + GPUDICT_VERSION);
  app.footer(
      "\nStart with:  gpudict sorted-array examples/quickstart.yaml\n"
      "Each subcommand has its own --help with examples.");

  CommonFlags flags;
  std::string workload;
  // Each structure's options, apart: two structures may name an option
  // alike with different defaults (--load-factor, --pool-growth).
  std::map<std::string, std::map<std::string, std::string>> struct_opts;
  const StructureInfo* chosen = nullptr;

  for (const auto& s : structures()) {
    CLI::App* sub = app.add_subcommand(s.name, s.summary);
    if (!s.details.empty()) sub->description(s.summary + "\n\n" + s.details);
    sub->add_option("workload", workload, "Workload: YAML file, binary key file (raw or SOSD), graph file (.mtx, .el, .edges, .coo) or trace (.gdt)")
        ->required();
    add_run_options(sub, flags, s.name);
    add_run_outputs(sub, flags);
    for (const auto& o : s.options) {
      std::string& value = struct_opts[s.name][o.name];
      value = o.default_value;
      auto* opt = sub->add_option("--" + o.name, value, o.help)->check(validator_for(o.type))->type_name(o.type);
      if (!o.default_value.empty()) opt->default_str(o.default_value);
    }
    if (s.make_gpu)
      sub->footer(run_footer(s.name, example_for(s.caps)));
    else
      sub->footer("\nNot built yet in this version of gpudict: running it exits 2 (bad usage). 'gpudict info' lists\n"
                  "the structures that are built.");
    sub->callback([&chosen, &s] { chosen = &s; });
  }

  // compare: the run options that make sense across structures.
  std::string cmp_workload, cmp_structures;
  CommonFlags cmp_flags;
  CLI::App* cmp = app.add_subcommand("compare", "Run one workload on every structure that can, and print one table");
  cmp->add_option("workload", cmp_workload, "Workload: YAML file, binary key file (raw or SOSD), graph file (.mtx, .el, .edges, .coo) or trace (.gdt)")
      ->required();
  cmp->add_option("--structures", cmp_structures,
                  "Comma-separated structures to run (default: every built one that can run the workload)");
  add_run_options(cmp, cmp_flags, "compare");
  std::string cmp_chart;
  cmp->add_option("--chart", cmp_chart,
                  "Also draw the table's rates as a bar chart into FILE.svg (a group per step and operation, a bar "
                  "per structure, the fastest marked; scripts/compare_chart.py draws PNG from --format csv)")
      ->type_name("FILE.svg")
      ->check(CLI::Validator(
          [](std::string& v) -> std::string {
            if (v.size() < 5 || v.compare(v.size() - 4, 4, ".svg") != 0)
              return "'" + v + "' does not end in .svg: --chart writes SVG";
            return {};
          },
          "", "svg"));
  cmp->footer(
      "\nEach structure runs with its default options, verified unless --no-verify; a structure that\n"
      "cannot run the workload (an operation or snapshots it lacks) is listed with the reason. The table\n"
      "gives each step's rate per structure (M ops/s of device time) and marks the fastest.\n"
      "Examples:\n"
      "  gpudict compare examples/quickstart.yaml\n"
      "  gpudict compare examples/bench-btree.yaml --no-verify --structures sorted-array,btree\n"
      "  gpudict compare examples/churn-hot-point.yaml --format csv > rates.csv\n"
      "  gpudict compare examples/bench-btree.yaml --no-verify --repeat 3 --chart rates.svg\n\n"
      "Exit codes: 0 every run verified, 1 a verification failed, 2 bad input or no structure can run\n"
      "it, 3 runtime failure.");

  std::string gen_workload, gen_out;
  uint64_t gen_seed = 0;
  bool gen_quiet = false;
  CLI::App* gen = app.add_subcommand("gen", "Write a workload's initial keys and operations as binary files");
  gen->add_option("workload", gen_workload, "Workload: YAML file, binary key file or trace (.gdt)")->required();
  gen->add_option("-o,--output", gen_out, "Output directory (created if missing)")->required();
  CLI::Option* gen_seed_opt = gen->add_option("--seed", gen_seed, "Seed (overrides the file's `seed`)")->check(kSeed);
  WidthFlags gen_widths;
  gen_widths.add_to(gen);
  gen->add_flag("-q,--quiet", gen_quiet, "Print nothing");
  gen->footer(
      "\nWrites DIR/initial_keys.bin and DIR/initial_values.bin (raw little-endian arrays) and DIR/trace.gdt\n"
      "(the whole workload as an operation trace, docs/workload-format.md), which any structure replays.\n"
      "The files appear together when all are written; a failed gen leaves the files already in DIR as\n"
      "they were.\n"
      "Example:\n"
      "  gpudict gen examples/quickstart.yaml -o /tmp/qs && gpudict sorted-array /tmp/qs/trace.gdt");

  std::string check_workload, check_format = "text";
  uint64_t check_seed = 0;
  CLI::Option* check_seed_opt = nullptr;
  CLI::App* check = app.add_subcommand("check", "Validate a workload without running it and summarise it");
  check->add_option("workload", check_workload, "Workload file")->required();
  check->add_option("--format", check_format, "text or json")->check(CLI::IsMember({"text", "json"}))->capture_default_str();
  check_seed_opt = check->add_option("--seed", check_seed, "Seed (overrides the file's `seed`)")->check(kSeed);
  WidthFlags check_widths;
  check_widths.add_to(check);
  check->footer("\nExample:\n  gpudict check examples/quickstart.yaml\nExit code 0 when valid, 2 with the first error (file:line:column) otherwise,\n3 when the summary could not be written.");

  std::string info_format = "text";
  CLI::App* info = app.add_subcommand("info", "CUDA devices, driver and runtime versions, build options, structures");
  info->add_option("--format", info_format, "text or json")->check(CLI::IsMember({"text", "json"}))->capture_default_str();
  info->footer("\nExample:\n  gpudict info");

  wrap_help(app);
  // Bare `gpudict`: the help, as `gpudict --help` prints it.
  if (argc == 1) {
    std::fputs(app.help().c_str(), stdout);
    return 0;
  }
  // CLI11 reports a misspelt subcommand as "A subcommand is required".
  if (argv[1][0] != '-') {
    std::vector<std::string> names;
    bool known = false;
    for (const CLI::App* sub : app.get_subcommands({})) {
      names.push_back(sub->get_name());
      known = known || sub->get_name() == argv[1];
    }
    if (!known) {
      std::string list;
      for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
      const std::string hint = suggestion(argv[1], names);
      std::fprintf(stderr, "gpudict: unknown subcommand '%s'%s (one of: %s; gpudict --help for usage)\n", argv[1],
                   hint.empty() ? "" : (", " + hint).c_str(), list.c_str());
      return kExitBadInput;
    }
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "gpudict: %s\nRun 'gpudict --help' (or 'gpudict SUBCOMMAND --help') for usage.\n", e.what());
    return kExitBadInput;
  }

  try {
    // The workload file before anything else (not CLI11's ExistingFile,
    // whose message takes two lines): a missing, directory or unreadable
    // workload is one line naming it, exit 2, from every subcommand, and
    // comes before the no-device notice.
    if (chosen) check_workload_file(workload);
    if (gen->parsed()) check_workload_file(gen_workload);
    if (cmp->parsed()) check_workload_file(cmp_workload);
    if (check->parsed()) check_workload_file(check_workload);
    if (chosen && flags.quiet && flags.format == "csv")
      throw InputError("--quiet prints the verdict, which has no CSV form: use --format text or json with it");
    if (chosen) {
      RunOptions o = run_options(flags, chosen->name, workload, argc, argv);
      o.structure_options = struct_opts[chosen->name];
      for (const auto& spec : chosen->options)
        if (app.get_subcommand(chosen->name)->get_option("--" + spec.name)->count() > 0)
          o.given_structure_options.push_back(spec.name);
      return run_structure(*chosen, o);
    }
    if (cmp->parsed()) {
      RunOptions o = run_options(cmp_flags, "compare", cmp_workload, argc, argv);
      o.chart = cmp_chart;
      std::vector<std::string> names;
      for (size_t at = 0; !cmp_structures.empty() && at <= cmp_structures.size();) {
        const size_t comma = std::min(cmp_structures.find(',', at), cmp_structures.size());
        if (comma > at) names.push_back(cmp_structures.substr(at, comma - at));
        at = comma + 1;
      }
      return run_compare(names, o);
    }
    if (gen->parsed()) {
      OpenOptions oo{gen_seed_opt->count() > 0, gen_seed, gen_widths.as_override()};
      return run_gen(gen_workload, oo, gen_out, gen_quiet);
    }
    if (check->parsed()) {
      OpenOptions oo{check_seed_opt->count() > 0, check_seed, check_widths.as_override()};
      return run_check(check_workload, oo, kFormats.at(check_format));
    }
    if (info->parsed()) return run_info(kFormats.at(info_format));
  } catch (const Error& e) {
    std::fprintf(stderr, "gpudict: %s\n", cli_message(e).c_str());
    return exit_code_for(e);
  } catch (const std::system_error& e) {  // fmt::print when stdio could not write (a full disk, a closed pipe)
    std::fprintf(stderr, "gpudict: cannot write output: %s\n", e.what());
    return kExitRuntime;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "gpudict: out of host memory\n");
    return kExitRuntime;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpudict: internal error: %s\n", e.what());
    return kExitRuntime;
  }
  return kExitBadInput;
}

}  // namespace gpudict
