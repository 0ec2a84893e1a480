// The CLI end to end on the CPU backend: help, info, check, gen then replay,
// every example verified, exit codes, and the json/csv shapes.
#include <doctest/doctest.h>

#include "workloads/registry/registry.hpp"
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "cli/exit_codes.hpp"
#include "cli_helpers.hpp"
#include "core/common/device_info.hpp"

using namespace gpudict::testing;
namespace fs = std::filesystem;

namespace {
std::vector<std::string> example_workloads() {
  std::vector<std::string> v;
  for (const auto& e : fs::directory_iterator(fs::path(GPUDICT_SOURCE_DIR) / "examples"))
    if (e.path().extension() == ".yaml" && e.path().filename().string().rfind("bench-", 0) != 0)
      v.push_back("examples/" + e.path().filename().string());
  std::sort(v.begin(), v.end());
  return v;
}

// `gpudict args` is a usage error: exit 2, and stderr says `message`.
void check_usage_error(const std::string& args, const std::string& message) {
  INFO("gpudict " << args);
  const auto r = run_gpudict(args);
  INFO("stderr: " << r.err);
  CHECK(r.exit_code == 2);
  CHECK(r.err.find(message) != std::string::npos);
}
}  // namespace

TEST_CASE("cli: help teaches, with examples") {
  auto r = run_gpudict("--help");
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("sorted-array") != std::string::npos);
  CHECK(r.out.find("gen") != std::string::npos);
  auto s = run_gpudict("sorted-array --help");
  CHECK(s.exit_code == 0);
  CHECK(s.out.find("Examples:") != std::string::npos);
  CHECK(s.out.find("--backend") != std::string::npos);
  CHECK(s.out.find("Exit codes") != std::string::npos);
  for (const char* sub : {"gen --help", "check --help", "info --help"}) {
    auto h = run_gpudict(sub);
    CHECK_MESSAGE(h.exit_code == 0, sub);
    CHECK_MESSAGE(h.out.find("Example") != std::string::npos, sub);
  }
}

TEST_CASE("cli: structures' options apart: an option two structures name alike keeps each one's default") {
  // slabhash's --load-factor has no default (it excludes --buckets); the
  // graph's is 0.7. Shared, the graph's default made --buckets an error.
  auto r = run_gpudict("slabhash examples/hash-quickstart.yaml --backend cpu --quiet --buckets 64");
  CHECK_MESSAGE(r.exit_code == 0, r.err);
  r = run_gpudict("graph examples/graph-rmat.yaml --backend cpu --quiet --load-factor 2");
  CHECK_MESSAGE(r.exit_code == 0, r.err);
}

TEST_CASE("cli: usage errors exit 2 with a message") {
  check_usage_error("sorted-array examples/quickstart.yaml --format xml", "--format");
  check_usage_error("sorted-array /nonexistent/workload.yaml", "/nonexistent/workload.yaml");
  check_usage_error("graph examples/quickstart.yaml --backend cpu", "u32 keys with u32 values are not supported by graph");
}

TEST_CASE("cli: info prints devices or says there are none") {
  auto r = run_gpudict("info");
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("CUDA driver:") != std::string::npos);
  CHECK(r.out.find("build: CUDA architectures") != std::string::npos);
  if (gpudict::cuda_device_count() == 0) CHECK(r.out.find("devices: none") != std::string::npos);
  else CHECK(r.out.find("device 0:") != std::string::npos);
  auto j = run_gpudict("info --format json");
  CHECK(j.exit_code == 0);
  CHECK(j.out.rfind("{\"version\":", 0) == 0);
}

TEST_CASE("cli: every example checks and runs verified on the CPU reference") {
  auto examples = example_workloads();
  REQUIRE(examples.size() >= 5);
  for (const auto& ex : examples) {
    auto c = run_gpudict("check " + ex);
    CHECK_MESSAGE(c.exit_code == 0, ex << ": " << c.err);
    CHECK_MESSAGE(c.out.find("valid") != std::string::npos, ex);
    // The graph operations' examples run on the graph (the ordered ones refuse them).
    const bool graph_ops = c.out.find("operations (the workload has") != std::string::npos &&
                           c.out.find("structures that do: graph\n") != std::string::npos;
    for (const char* structure : graph_ops ? std::vector<const char*>{"graph"} : std::vector<const char*>{"sorted-array", "lsm"}) {
      auto r = run_gpudict(std::string(structure) + " " + ex + " --backend cpu");
      CHECK_MESSAGE(r.exit_code == 0, structure << " " << ex << ": " << r.err);
      CHECK_MESSAGE(r.out.find(", 0 mismatches") != std::string::npos, structure << " " << ex << "\n" << r.out);
    }
  }
}

TEST_CASE("cli: --key-type and --value-type run a YAML workload at other widths") {
  auto c = run_gpudict("check examples/quickstart.yaml --key-type u64 --value-type u64");
  CHECK_MESSAGE(c.exit_code == 0, c.err);
  CHECK_MESSAGE(c.out.find("u64") != std::string::npos, c.out);
  auto r = run_gpudict("slabhash examples/hash-quickstart.yaml --backend cpu --key-type u64 --value-type u64");
  CHECK_MESSAGE(r.exit_code == 0, r.err);
  CHECK_MESSAGE(r.out.find(", 0 mismatches") != std::string::npos, r.out);
  CHECK(run_gpudict("check examples/quickstart.yaml --key-type u128").exit_code == 2);
  // A trace's widths are those of its data: the override is refused in one line.
  const std::string dir = gpudict::testing::temp_path("widths-gen");
  REQUIRE(run_gpudict("gen examples/quickstart.yaml -q -o " + dir).exit_code == 0);
  auto t = run_gpudict("check " + dir + "/trace.gdt --key-type u64");
  CHECK(t.exit_code == 2);
  CHECK_MESSAGE(t.err.find("YAML workloads only") != std::string::npos, t.err);
  CHECK(std::count(t.err.begin(), t.err.end(), '\n') == 1);
  std::filesystem::remove_all(dir);
}

TEST_CASE("cli: no device means the CPU reference with a one-line notice") {
  if (gpudict::cuda_device_count() != 0) return;  // only meaningful without a GPU
  auto r = run_gpudict("sorted-array examples/quickstart.yaml --quiet");
  CHECK(r.exit_code == 0);
  CHECK(lines_of(r.err).size() == 1);
  CHECK(r.err.find("CPU reference") != std::string::npos);
  auto g = run_gpudict("sorted-array examples/quickstart.yaml --backend gpu");
  CHECK(g.exit_code == 3);
  CHECK(g.err.find("no CUDA device") != std::string::npos);
}

TEST_CASE("cli: json is one object per line with stable fields") {
  auto r = run_gpudict("sorted-array examples/quickstart.yaml --backend cpu --format json");
  REQUIRE(r.exit_code == 0);
  auto ls = lines_of(r.out);
  REQUIRE(ls.size() >= 3);
  CHECK(ls.front().rfind("{\"record\":\"run\",", 0) == 0);
  CHECK(ls.back().rfind("{\"record\":\"summary\",\"verified\":true,", 0) == 0);
  for (size_t i = 1; i + 1 < ls.size(); ++i) {
    CHECK(ls[i].rfind("{\"record\":\"step\",\"step\":", 0) == 0);
    CHECK(ls[i].back() == '}');
    for (const char* field : {"\"kind\":", "\"name\":", "\"mode\":", "\"ops\":", "\"rows\":", "\"e2e_ms\":", "\"gen_ms\":",
                              "\"verify_ms\":"})
      CHECK(ls[i].find(field) != std::string::npos);
  }
  for (const char* field : {"\"structure\":\"sorted-array\"", "\"backend\":\"cpu\"", "\"device\":", "\"parameters\":"})
    CHECK(ls.front().find(field) != std::string::npos);
}

TEST_CASE("cli: the time is accounted: generation, verification and the whole wall time") {
  auto r = run_gpudict("sorted-array examples/quickstart.yaml --backend cpu --format json");
  REQUIRE(r.exit_code == 0);
  const auto ls = lines_of(r.out);
  const std::string& summary = ls.back();
  auto number = [&](const std::string& key) {
    const size_t p = summary.find("\"" + key + "\":");
    REQUIRE_MESSAGE(p != std::string::npos, key);
    return std::stod(summary.substr(p + key.size() + 3));
  };
  const double wall = number("wall_ms"), gen = number("total_gen_ms"), ver = number("total_verify_ms"),
               e2e = number("total_e2e_ms");
  CHECK(gen > 0);
  CHECK(ver > 0);
  // One repetition: the parts are disjoint stretches of the same run.
  CHECK(wall >= gen + ver + e2e);
  // The host memory the run held at most: at least the reference's keys.
  CHECK(number("peak_host_bytes") > 134343.0 * 8);
  auto t = run_gpudict("sorted-array examples/quickstart.yaml --backend cpu");
  CHECK(t.out.find("wall: ") != std::string::npos);
  CHECK(t.out.find("s verifying") != std::string::npos);
  CHECK(t.out.find("; host memory peak ") != std::string::npos);
}

TEST_CASE("cli: the progress line: on a terminal or with --progress, never with --quiet, erased at the end") {
  // stderr is a pipe here: no line unless asked for.
  auto plain = run_gpudict("sorted-array examples/quickstart.yaml --backend cpu");
  REQUIRE(plain.exit_code == 0);
  CHECK(plain.err.find("batches") == std::string::npos);
  auto p = run_gpudict("sorted-array examples/quickstart.yaml --backend cpu --progress");
  REQUIRE(p.exit_code == 0);
  CHECK(p.err.find("12 of 12 batches (100%)") != std::string::npos);
  CHECK(p.err.size() >= 4);
  CHECK(p.err.substr(p.err.size() - 4) == "\r\x1b[K");  // erased: the terminal is left clean
  CHECK(p.out.find("verified: ") != std::string::npos);
  auto q = run_gpudict("sorted-array examples/quickstart.yaml --backend cpu --progress --quiet");
  CHECK(q.err.empty());
}

TEST_CASE("cli: csv has a header row and rectangular rows") {
  auto r = run_gpudict("sorted-array examples/quickstart.yaml --backend cpu --format csv");
  REQUIRE(r.exit_code == 0);
  auto ls = lines_of(r.out);
  REQUIRE(ls.size() >= 2);
  CHECK(ls[0] == "structure,backend,device,workload,seed,repeat,run_verified,step,kind,name,mode,snapshot,batches,op,ops,verified,device_ms,mops,e2e_ms,gen_ms,verify_ms,device_ms_min,device_ms_max");
  // The seed, the repetitions and the verdict on every row; e2e_ms once per step.
  CHECK(ls[1].find(",42,1,true,0,build,") != std::string::npos);
  const auto n = run_gpudict("sorted-array examples/quickstart.yaml --backend cpu --format csv --no-verify");
  REQUIRE(n.exit_code == 0);
  CHECK(lines_of(n.out)[1].find(",42,1,,0,build,") != std::string::npos);
  for (const auto& l : ls) CHECK(count_fields(l) == count_fields(ls[0]));
  // --repeat: the median with its spread, min <= median <= max on every row.
  const auto rep = run_gpudict("sorted-array examples/quickstart.yaml --backend cpu --format csv --no-verify --repeat 3");
  REQUIRE(rep.exit_code == 0);
  for (const auto& l : lines_of(rep.out)) {
    if (l.rfind("structure,", 0) == 0) continue;
    std::vector<std::string> f;
    std::string cur;
    for (char c : l) {
      if (c == ',') {
        f.push_back(cur);
        cur.clear();
      } else {
        cur += c;
      }
    }
    f.push_back(cur);
    REQUIRE(f.size() == 23);
    const double med = std::stod(f[16]), lo = std::stod(f[21]), hi = std::stod(f[22]);
    CHECK(lo <= med);
    CHECK(med <= hi);
  }
}

TEST_CASE("cli: gen then replay gives the same results as the YAML") {
  std::string dir = temp_path("gen");
  auto g = run_gpudict("gen examples/quickstart.yaml -o " + dir);
  REQUIRE(g.exit_code == 0);
  CHECK(fs::exists(dir + "/trace.gdt"));
  CHECK(fs::exists(dir + "/initial_keys.bin"));
  CHECK(fs::exists(dir + "/initial_values.bin"));
  std::string ra = temp_path("a.tsv"), rb = temp_path("b.tsv");
  auto a = run_gpudict("sorted-array examples/quickstart.yaml --backend cpu --results " + ra);
  auto b = run_gpudict("sorted-array " + dir + "/trace.gdt --backend cpu --results " + rb);
  REQUIRE(a.exit_code == 0);
  REQUIRE(b.exit_code == 0);
  std::string sa = slurp(ra), sb = slurp(rb);
  CHECK(sa.size() > 100);
  CHECK(sa == sb);
  CHECK(sa.rfind("batch\top\ttype\tkey\targ\tfound\tvalue\tresult_key\tpairs\n", 0) == 0);  // a plain header row
  auto ac = run_gpudict("sorted-array examples/quickstart.yaml --backend cpu --results-comment --results " + ra);
  REQUIRE(ac.exit_code == 0);
  CHECK(slurp(ra) == "# gpudict results v1\n" + sa);
  // The raw key file replays too: build, then look every key up.
  auto k = run_gpudict("sorted-array " + dir + "/initial_keys.bin --backend cpu --quiet");
  CHECK(k.exit_code == 0);
  auto c = run_gpudict("check " + dir + "/trace.gdt");
  CHECK(c.exit_code == 0);
  fs::remove_all(dir);
  std::remove(ra.c_str());
  std::remove(rb.c_str());
}

TEST_CASE("cli: bad workloads exit 2 naming file and line") {
  std::string p = temp_path("bad.yaml");
  {
    std::ofstream f(p);
    f << "seed: 1\nsteps:\n  - phase:\n      batches: 2\n      batch_size: 10\n      mix: {insert: 0.5, lookup: 0.2}\n";
  }
  check_usage_error("check " + p, p + ":6:");
  auto s = run_gpudict("sorted-array " + p + " --backend cpu");
  CHECK(s.exit_code == 2);
  std::remove(p.c_str());
}

TEST_CASE("cli: --repeat reports medians and --seed changes generated data") {
  auto r = run_gpudict("sorted-array examples/quickstart.yaml --backend cpu --repeat 3");
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("median of 3 repetitions") != std::string::npos);
  std::string ra = temp_path("s1.tsv"), rb = temp_path("s2.tsv");
  run_gpudict("sorted-array examples/quickstart.yaml --backend cpu --quiet --seed 7 --results " + ra);
  run_gpudict("sorted-array examples/quickstart.yaml --backend cpu --quiet --seed 8 --results " + rb);
  CHECK(slurp(ra) != slurp(rb));
  std::remove(ra.c_str());
  std::remove(rb.c_str());
}

TEST_CASE("cli: --batch-times writes one CSV row per batch") {
  std::string p = temp_path("bt.csv");
  auto r = run_gpudict("sorted-array examples/quickstart.yaml --backend cpu --quiet --batch-times " + p);
  REQUIRE(r.exit_code == 0);
  auto ls = lines_of(slurp(p));
  REQUIRE(ls.size() == 13);  // header + the quickstart's 12 batches
  CHECK(ls[0] == "batch,step,ops,updates,device_ms,mops");
  for (size_t i = 1; i < ls.size(); ++i) {
    CHECK(count_fields(ls[i]) == 6);
    CHECK(ls[i].rfind(std::to_string(i - 1) + ",", 0) == 0);
  }
  std::remove(p.c_str());
}

TEST_CASE("cli: structure options are validated and shown in --help") {
  auto h = run_gpudict("lsm --help");
  CHECK(h.exit_code == 0);
  CHECK(h.out.find("--batch-size") != std::string::npos);
  CHECK(h.out.find("--cleanup-every") != std::string::npos);
  check_usage_error("lsm examples/quickstart.yaml --backend cpu --batch-size 1000", "--batch-size");
  // Two-way choices (StructureConfig::get_choice): the message names the
  // option, the value and both choices; a valid choice runs.
  check_usage_error("lsm examples/quickstart.yaml --backend cpu --lookup-filter yes",
                    "--lookup-filter: 'yes' is not on or off");
  check_usage_error("btree examples/mixed-concurrent.yaml --backend cpu --leaf-groups 1",
                    "--leaf-groups: '1' is not on or off");
  check_usage_error("btree examples/mixed-concurrent.yaml --backend cpu --ops-kernel warp",
                    "--ops-kernel: 'warp' is not thread or tile");
  CHECK(run_gpudict("btree examples/mixed-concurrent.yaml --backend cpu --leaf-groups off --ops-kernel tile").exit_code == 0);
}

TEST_CASE("cli: seeds and device indices outside their range are refused, not wrapped") {
  check_usage_error("sorted-array examples/quickstart.yaml --backend cpu --seed -1", "is not a seed");
  check_usage_error("sorted-array examples/quickstart.yaml --backend cpu --seed 18446744073709551616",
                    "larger than the largest seed");
  check_usage_error("check examples/quickstart.yaml --seed 1e3", "is not a seed");
  check_usage_error("gen examples/quickstart.yaml -o /tmp/never --seed -5", "is not a seed");
  check_usage_error("sorted-array examples/quickstart.yaml --backend cpu --device -1", "not a CUDA device index");
  auto top = run_gpudict("check examples/quickstart.yaml --seed 18446744073709551615 --format json");
  CHECK(top.exit_code == 0);
  CHECK(top.out.find("\"seed\":18446744073709551615") != std::string::npos);
  check_usage_error("sortedarray examples/quickstart.yaml", "unknown subcommand 'sortedarray'");
}

TEST_CASE("cli: bare gpudict prints the help; a misspelt subcommand gets a suggestion on one line") {
  const auto bare = run_gpudict("");
  CHECK(bare.exit_code == 0);
  CHECK(bare.out == run_gpudict("--help").out);
  CHECK(bare.out.find("Subcommands:") != std::string::npos);
  for (const auto& [typed, meant] : std::vector<std::pair<std::string, std::string>>{
           {"sortedarray", "sorted-array"}, {"lsmm", "lsm"}, {"btre", "btree"}, {"slab", "slabhash"}, {"chek", "check"}}) {
    CAPTURE(typed);
    const auto r = run_gpudict(typed + " examples/quickstart.yaml");
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("unknown subcommand '" + typed + "', did you mean '" + meant + "'?") != std::string::npos);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  }
  const auto far = run_gpudict("frobnicate examples/quickstart.yaml");
  CHECK(far.exit_code == 2);
  CHECK(far.err.find("did you mean") == std::string::npos);
  CHECK(far.err.find("one of: sorted-array, lsm") != std::string::npos);
}

TEST_CASE("cli: each structure's help example runs") {
  for (const char* s : {"sorted-array", "lsm", "btree", "mvbtree", "slabhash", "graph"}) {
    auto h = run_gpudict(std::string(s) + " --help");
    REQUIRE(h.exit_code == 0);
    const auto at = h.out.find("gpudict " + std::string(s) + " examples/");
    REQUIRE_MESSAGE(at != std::string::npos, s);
    const auto end = h.out.find(' ', h.out.find("examples/", at));
    const std::string example = h.out.substr(h.out.find("examples/", at), end - h.out.find("examples/", at));
    auto r = run_gpudict(std::string(s) + " " + example + " --backend cpu --quiet");
    CHECK_MESSAGE(r.exit_code == 0, s << " " << example << ": " << r.err);
  }
  // The CPU reference standing in for mvbtree runs a concurrent batch as its
  // updates, then its queries: the general concurrent checks, not mvbtree's
  // exact queries-first ones.
  auto mv = run_gpudict("mvbtree examples/mixed-concurrent.yaml --backend cpu --quiet");
  CHECK_MESSAGE(mv.exit_code == 0, mv.err);
}

TEST_CASE("cli: a graph file is a workload: its edges built and looked up, verified") {
  const std::string path = (std::filesystem::temp_directory_path() / "gpudict_cli_wheel.mtx").string();
  {
    // A wheel of 5 vertices: hub 1, rim 2-3-4-5-2, symmetric (undirected).
    std::ofstream out(path);
    out << "%%MatrixMarket matrix coordinate pattern symmetric\n5 5 8\n"
           "2 1\n3 1\n4 1\n5 1\n3 2\n4 3\n5 4\n5 2\n";
  }
  auto r = run_gpudict("btree " + path + " --backend cpu --format json");
  CHECK_MESSAGE(r.exit_code == 0, r.err);
  CHECK(r.out.find("\"checked\":16") != std::string::npos);  // both directions of 8 edges
  auto bad = run_gpudict("btree " + path + " --key-type u32 --backend cpu");
  CHECK(bad.exit_code == 2);
}

TEST_CASE("cli: --quiet prints the verdict in text and json, and is refused with csv") {
  auto t = run_gpudict("lsm examples/adversarial.yaml --backend cpu --quiet");
  CHECK(t.exit_code == 0);
  CHECK(lines_of(t.out).size() == 1);
  CHECK(t.out.rfind("verified: ", 0) == 0);
  auto j = run_gpudict("lsm examples/adversarial.yaml --backend cpu --quiet --format json");
  CHECK(j.exit_code == 0);
  REQUIRE(lines_of(j.out).size() == 1);
  CHECK(j.out.rfind("{\"record\":\"summary\",\"verified\":true,", 0) == 0);
  check_usage_error("lsm examples/adversarial.yaml --backend cpu --quiet --format csv", "no CSV form");
}

TEST_CASE("cli: output that cannot be written is exit 3, and --batch-times is opened before the run") {
  if (!fs::exists("/dev/full")) {  // writes to it fail with ENOSPC
    MESSAGE("no /dev/full on this machine: the write-failure checks are skipped");
    return;
  }
  for (const std::string args : {"lsm examples/adversarial.yaml --backend cpu", "check examples/adversarial.yaml", "info"}) {
    const std::string err = temp_path("full.err");
    const std::string cmd = std::string("cd '") + GPUDICT_SOURCE_DIR + "' && '" + gpudict_binary() + "' " + args +
                            " >/dev/full 2>'" + err + "' </dev/null";
    const int status = std::system(cmd.c_str());
    INFO(args << ": " << slurp(err));
    CHECK((WIFEXITED(status) ? WEXITSTATUS(status) : -1) == 3);
    CHECK(slurp(err).find("cannot write") != std::string::npos);
    std::remove(err.c_str());
  }
  auto bt = run_gpudict("lsm examples/adversarial.yaml --backend cpu --batch-times /nonexistent/dir/bt.csv");
  CHECK(bt.exit_code == 2);
  CHECK(bt.err.find("--batch-times /nonexistent/dir/bt.csv: cannot write") != std::string::npos);
  CHECK(bt.out.empty());  // refused before the run: no report
  auto full = run_gpudict("lsm examples/adversarial.yaml --backend cpu --quiet --batch-times /dev/full");
  CHECK(full.exit_code == 3);
  // Results that could not be written are lost output too, however few.
  auto res = run_gpudict("lsm examples/adversarial.yaml --backend cpu --quiet --results /dev/full");
  CHECK(res.exit_code == 3);
  CHECK(res.err.find("--results /dev/full") != std::string::npos);
  // An input refused before the run (exit 2) leaves an existing --batch-times file as it was.
  const std::string kept = temp_path("kept.csv");
  std::ofstream(kept) << "earlier run\n";
  check_usage_error("lsm examples/adversarial.yaml --backend cpu --lookup-filter maybe --batch-times " + kept,
                    "--lookup-filter: 'maybe' is not on or off");
  CHECK(slurp(kept) == "earlier run\n");
  std::remove(kept.c_str());
}

TEST_CASE("cli: gen leaves its directory as it was when it fails, and can rewrite its own input") {
  const std::string dir = temp_path("gen_safe");
  REQUIRE(run_gpudict("gen examples/adversarial.yaml -q -o " + dir).exit_code == 0);
  const std::string trace = slurp(dir + "/trace.gdt"), keys = slurp(dir + "/initial_keys.bin");
  REQUIRE(trace.size() > 100);
  // Its own trace as input, into the same directory: read whole, then replaced by the same bytes.
  auto again = run_gpudict("gen " + dir + "/trace.gdt -q -o " + dir);
  CHECK(again.exit_code == 0);
  CHECK(slurp(dir + "/trace.gdt") == trace);
  CHECK(slurp(dir + "/initial_keys.bin") == keys);
  // A workload that fails while generating: the directory keeps the good files, and no temporaries.
  const std::string bad = temp_path("narrow.yaml");
  {
    std::ofstream f(bad);
    f << "initial: {count: 1000, keys: {distribution: normal, stddev: 1e-7, min: 0, max: 1000000}}\n";
  }
  auto g = run_gpudict("gen " + bad + " -o " + dir);
  CHECK(g.exit_code == 2);
  CHECK(slurp(dir + "/trace.gdt") == trace);
  size_t files = 0;
  for (const auto& e : fs::directory_iterator(dir)) files += e.is_regular_file();
  CHECK(files == 3);
  fs::remove_all(dir);
  std::remove(bad.c_str());
}

TEST_CASE("cli: check reads a key file's keys and draws narrow distributions, as a run would") {
  const std::string dir = temp_path("check_keys");
  fs::create_directories(dir);
  {
    // SOSD: a u64 count, then u64 keys; 2^40 does not fit the default u32 key type.
    std::ofstream f(dir + "/big.bin", std::ios::binary);
    const uint64_t words[] = {3, 1, 2, 1ull << 40};
    f.write(reinterpret_cast<const char*>(words), sizeof words);
  }
  {
    std::ofstream f(dir + "/w.yaml");
    f << "initial: {file: big.bin}\n";
  }
  {
    std::ofstream f(dir + "/narrow.yaml");
    f << "initial: {count: 1000, keys: {distribution: zipfian, min: 0, max: 100}}\n";
  }
  check_usage_error("check " + dir + "/w.yaml", "out of range for the key type");
  check_usage_error("check " + dir + "/narrow.yaml", "initial.count");
  fs::remove_all(dir);
}

TEST_CASE("cli: integers take '_' only between digits, reals only in decimal") {
  const std::string p = temp_path("sep.yaml");
  auto with = [&](const std::string& text) {
    std::ofstream f(p);
    f << text;
  };
  with("initial: {count: 1_000}\n");
  CHECK(run_gpudict("check " + p).exit_code == 0);
  for (const char* bad : {"1__000", "1000_", "_1000"}) {
    with(std::string("initial: {count: ") + bad + "}\n");
    check_usage_error("check " + p, "is not an integer");
  }
  with("steps:\n  - phase: {batches: 1, batch_size: 8, mix: {lookup: 1}, hit_ratio: 0x1p-1}\n");
  check_usage_error("check " + p, "is not a decimal number");
  with("steps:\n  - phase: {batches: 1, batch_size: 8, mix: {lookup: 1}, hit_ratio: 1e-400}\n");
  check_usage_error("check " + p, "under- or overflows");
  std::remove(p.c_str());
}

namespace {
// `gpudict args` fails as bad input with exactly one line on stderr, which
// starts "gpudict: " and contains every string of `parts`; nothing on stdout.
void check_one_line_error(const std::string& args, const std::vector<std::string>& parts,
                          const std::string& prefix = "") {
  INFO(prefix << " gpudict " << args);
  const auto r = run_gpudict(args, prefix);
  INFO("stderr: " << r.err);
  CHECK(r.exit_code == 2);
  CHECK(lines_of(r.err).size() == 1);
  CHECK(r.err.rfind("gpudict: ", 0) == 0);
  CHECK(!r.err.empty());
  CHECK(r.err.back() == '\n');
  for (const auto& p : parts) CHECK(r.err.find(p) != std::string::npos);
  CHECK(r.out.empty());
}
}  // namespace

TEST_CASE("cli: a missing, directory or unreadable workload is one line naming it, from every subcommand") {
  const std::string dir = temp_path("wl_dir");
  fs::create_directories(dir);
  const std::string missing = dir + "/missing.bin", missing_yaml = dir + "/missing.yaml";
  const std::string yaml_dir = dir + "/looks-like.yaml";
  fs::create_directories(yaml_dir);
  const std::string kinds = "(a YAML workload, an operation trace, a graph file or a key file)";
  const std::string out = dir + "/out";
  for (const std::string& path : {missing, missing_yaml}) {
    const std::string line = "gpudict: " + path + ": no such file " + kinds;
    check_one_line_error("sorted-array " + path + " --backend cpu", {line});
    check_one_line_error("lsm " + path + " --backend cpu --format json", {line});
    check_one_line_error("sorted-array " + path, {line});  // before the no-device notice
    check_one_line_error("check " + path, {line});
    check_one_line_error("gen " + path + " -o " + out, {line});
  }
  for (const std::string& path : {dir, yaml_dir}) {
    const std::string line = "gpudict: " + path + ": is a directory " + kinds;
    check_one_line_error("sorted-array " + path + " --backend cpu", {line});
    check_one_line_error("btree " + path + " --backend cpu", {line});
    check_one_line_error("slabhash " + path, {line});
    check_one_line_error("check " + path + " --format json", {line});
    check_one_line_error("gen " + path + " -o " + out, {line});
  }
  CHECK_FALSE(fs::exists(out));  // gen refused before creating its directory
  // Unreadable: root reads any file, so as root the binary runs as nobody
  // (setpriv), where that works (a source or build directory nobody can reach
  // makes it skip).
  const std::string locked = dir + "/locked.bin";
  std::ofstream(locked, std::ios::binary) << std::string(16, '\1');
  fs::permissions(locked, fs::perms::none);
  std::string as_other;
  if (::geteuid() == 0) {
    as_other = "setpriv --reuid=65534 --regid=65534 --clear-groups";
    if (run_gpudict("--version", as_other).exit_code != 0) as_other = "skip";
  }
  if (as_other == "skip") {
    MESSAGE("running as root without a way to run gpudict as another user: the unreadable-file case is skipped");
  } else {
    const std::string line =
        "gpudict: " + locked + ": cannot open: Permission denied (a readable YAML workload, operation trace, graph file or key file)";
    check_one_line_error("sorted-array " + locked + " --backend cpu", {line}, as_other);
    check_one_line_error("sorted-array " + locked, {line}, as_other);
    check_one_line_error("check " + locked, {line}, as_other);
    check_one_line_error("gen " + locked + " -o " + out, {line}, as_other);
    // Named inside a YAML workload: the same reason, at the field.
    const std::string yaml = dir + "/locked.yaml";
    std::ofstream(yaml) << "initial: {file: locked.bin}\n";
    check_one_line_error("check " + yaml,
                         {"gpudict: " + yaml + ":1:17: initial.file: " + locked + ": cannot open: Permission denied"},
                         as_other);
  }
  fs::permissions(locked, fs::perms::owner_all);
  fs::remove_all(dir);
}

TEST_CASE("cli: an empty key file is refused unless a YAML workload allows it") {
  const std::string dir = temp_path("empty_keys");
  fs::create_directories(dir);
  const std::string raw = dir + "/empty.bin", sosd = dir + "/empty.sosd";
  std::ofstream(raw, std::ios::binary).flush();
  std::ofstream(sosd, std::ios::binary) << std::string(8, '\0');  // a SOSD header: count 0, no keys
  REQUIRE(fs::file_size(raw) == 0);
  REQUIRE(fs::file_size(sosd) == 8);
  const std::string how = "(at least one key; a YAML workload may start from an empty key file on purpose with "
                          "initial: {file: PATH, allow_empty: true})";
  const std::string out = dir + "/out";
  const std::pair<std::string, std::string> cases[] = {
      {raw, "gpudict: " + raw + ": empty key file: 0 bytes, no keys " + how},
      {sosd, "gpudict: " + sosd + ": empty key file: its SOSD header says 0 keys " + how}};
  for (const auto& [path, line] : cases) {
    check_one_line_error("sorted-array " + path + " --backend cpu", {line});
    check_one_line_error("lsm " + path + " --backend cpu --quiet", {line});
    check_one_line_error("check " + path, {line});
    check_one_line_error("gen " + path + " -o " + out, {line});
  }
  CHECK_FALSE(fs::exists(out));

  // In YAML: refused, with the file, line and field, and the opt-in named.
  const std::string refused = dir + "/refused.yaml";
  std::ofstream(refused) << "initial: {file: empty.bin}\nsteps:\n  - batch: {ops: [[lookup, 5]]}\n";
  const std::vector<std::string> parts = {"gpudict: " + refused + ":1:17: initial.file: " + raw +
                                          ": empty key file: 0 bytes, no keys (at least one key; to start from it "
                                          "empty on purpose, add allow_empty: true to initial)"};
  check_one_line_error("sorted-array " + refused + " --backend cpu", parts);
  check_one_line_error("check " + refused, parts);
  check_one_line_error("gen " + refused + " -o " + out, parts);
  CHECK_FALSE(fs::exists(out));

  // Allowed: runs verified from an empty start; check and gen agree.
  for (const std::string file : {"empty.bin", "empty.sosd"}) {
    INFO(file);
    const std::string allowed = dir + "/allowed.yaml";
    std::ofstream(allowed) << "initial: {file: " << file << ", allow_empty: true}\n"
                           << "steps:\n  - batch: {ops: [[lookup, 5], [successor, 0]]}\n"
                              "  - batch: {ops: [[insert, 5, 9], [lookup, 5]]}\n";
    const std::string results = dir + "/results.tsv";
    auto r = run_gpudict("sorted-array " + allowed + " --backend cpu --quiet --results " + results);
    CHECK(r.exit_code == 0);
    CHECK(r.out == "verified: 3 results checked, 0 mismatches\n");
    CHECK(r.err.empty());
    // Nothing there at first; the inserted key afterwards.
    const std::string res = slurp(results);
    CHECK(res.find("\n0\t0\tlookup\t5\t0\t0\t") != std::string::npos);
    CHECK(res.find("\n0\t1\tsuccessor\t0\t0\t0\t") != std::string::npos);
    CHECK(res.find("\n1\t1\tlookup\t5\t0\t1\t9\t") != std::string::npos);
    auto c = run_gpudict("check " + allowed);
    CHECK(c.exit_code == 0);
    CHECK(c.out.find("initial contents: 0 keys\n") != std::string::npos);
    auto g = run_gpudict("gen " + allowed + " -q -o " + out);
    CHECK(g.exit_code == 0);
    CHECK(fs::file_size(out + "/initial_keys.bin") == 0);
    // The trace of an empty start is a valid workload; its empty key file is not.
    auto t = run_gpudict("lsm " + out + "/trace.gdt --backend cpu --quiet");
    CHECK(t.exit_code == 0);
    CHECK(t.out == "verified: 3 results checked, 0 mismatches\n");
    check_one_line_error("sorted-array " + out + "/initial_keys.bin --backend cpu",
                         {out + "/initial_keys.bin: empty key file: 0 bytes, no keys"});
    fs::remove_all(out);
  }
  fs::remove_all(dir);
}

TEST_CASE("cli: every report carries its provenance: version, commit, date, host, command, device") {
  const auto j = run_gpudict("sorted-array examples/quickstart.yaml --backend cpu --format json --seed 5");
  REQUIRE(j.exit_code == 0);
  const std::string run = j.out.substr(0, j.out.find('\n'));
  CHECK(run.find("\"provenance\":{\"version\":\"") != std::string::npos);
  CHECK(run.find("\"commit\":\"") != std::string::npos);
  CHECK(run.find("\"commit\":\"\"") == std::string::npos);
  CHECK(run.find("\"host\":\"") != std::string::npos);
  CHECK(run.find("\"driver\":\"") != std::string::npos);
  CHECK(run.find("\"gpu\":null") != std::string::npos);  // the CPU backend names no device
  CHECK(run.find("sorted-array examples/quickstart.yaml --backend cpu --format json --seed 5\"") != std::string::npos);
  const auto d = run.find("\"date\":\"");
  REQUIRE(d != std::string::npos);
  const std::string date = run.substr(d + 8, 20);  // YYYY-MM-DDThh:mm:ssZ
  CHECK(date.size() == 20);
  CHECK(date[4] == '-');
  CHECK(date[10] == 'T');
  CHECK(date[19] == 'Z');
  const auto t = run_gpudict("sorted-array examples/quickstart.yaml --backend cpu");
  REQUIRE(t.exit_code == 0);
  CHECK(t.out.find("\nrun: gpudict ") != std::string::npos);
}

TEST_CASE("cli: --batch-times - writes the rows to stdout and the report to stderr") {
  const auto r = run_gpudict("sorted-array examples/quickstart.yaml --backend cpu --batch-times -");
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.rfind("batch,step,ops,updates,device_ms,mops\n", 0) == 0);
  CHECK(r.out.find("verified:") == std::string::npos);
  CHECK(r.err.find("verified:") != std::string::npos);
  CHECK(!std::filesystem::exists("-"));
  const auto both = run_gpudict("sorted-array examples/quickstart.yaml --backend cpu --batch-times - --results -");
  CHECK(both.exit_code == 2);
  CHECK(both.err.find("both ask for standard output") != std::string::npos);
}

TEST_CASE("cli: compare runs one workload on every structure that can, and check lists them") {
  const auto t = run_gpudict("compare examples/quickstart.yaml --backend cpu");
  REQUIRE(t.exit_code == 0);
  CHECK(t.out.find("gpudict compare: examples/quickstart.yaml") != std::string::npos);
  CHECK(t.out.find(" sorted-array ") != std::string::npos);
  CHECK(t.out.find(" lsm") != std::string::npos);
  CHECK(t.out.find("sorted-array: ") != std::string::npos);
  CHECK(t.out.find("verified, 46693 results") != std::string::npos);
  CHECK(t.out.find(" ms host, verified") != std::string::npos);  // the CPU backend's time is the host's
  CHECK(t.out.find(" ms device") == std::string::npos);
  CHECK(t.out.find("btree: cannot run it: ") != std::string::npos);   // snapshots
  CHECK(t.out.find("slabhash: cannot run it: ") != std::string::npos);  // successors
  CHECK(t.out.find('*') != std::string::npos);                       // a fastest is marked

  const auto j = run_gpudict("compare examples/hash-quickstart.yaml --backend cpu --format json --structures lsm,slabhash");
  REQUIRE(j.exit_code == 0);
  CHECK(j.out.rfind("{\"record\":\"compare\"", 0) == 0);
  CHECK(j.out.find("\"structures\":[\"lsm\",\"slabhash\"]") != std::string::npos);
  CHECK(j.out.find("\"record\":\"row\"") != std::string::npos);
  CHECK(j.out.find("{\"record\":\"structure\",\"structure\":\"slabhash\",\"verified\":true") != std::string::npos);
  CHECK(j.out.find("\"btree\"") == std::string::npos);  // not asked for

  const auto c = run_gpudict("compare examples/hash-quickstart.yaml --backend cpu --format csv --structures btree");
  REQUIRE(c.exit_code == 0);
  CHECK(c.out.rfind("step,kind,name,op,ops,structure,device_ms,mops,fastest,device_ms_min,device_ms_max\n", 0) == 0);
  CHECK(c.out.find(",btree,") != std::string::npos);

  // --repeat: each rate with its spread (text), every sample (json), the
  // fastest and slowest repetition (csv).
  const auto rt = run_gpudict("compare examples/hash-quickstart.yaml --backend cpu --no-verify --repeat 3 --structures lsm,slabhash");
  REQUIRE(rt.exit_code == 0);
  CHECK(rt.out.find("(median of 3 repetitions, then the rates' spread") != std::string::npos);
  CHECK(rt.out.find("%") != std::string::npos);
  const auto rj = run_gpudict("compare examples/hash-quickstart.yaml --backend cpu --no-verify --repeat 3 --format json --structures lsm");
  REQUIRE(rj.exit_code == 0);
  const auto at = rj.out.find("\"device_ms_samples\":{\"lsm\":[");
  REQUIRE(at != std::string::npos);
  const std::string list = rj.out.substr(at, rj.out.find(']', at) - at);
  CHECK(std::count(list.begin(), list.end(), ',') == 2);  // three samples
  CHECK(rj.out.find("\"device_ms_min\":{\"lsm\":") != std::string::npos);
  CHECK(rj.out.find("\"device_ms_max\":{\"lsm\":") != std::string::npos);

  // --chart: the same rates as an SVG bar chart, a bar per structure.
  const std::string svg = temp_path("rates.svg");
  const auto ch = run_gpudict("compare examples/hash-quickstart.yaml --backend cpu --no-verify --structures lsm,slabhash --chart " + svg);
  REQUIRE(ch.exit_code == 0);
  const std::string doc = slurp(svg);
  CHECK(doc.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0) == 0);
  CHECK(doc.find(">lsm</text>") != std::string::npos);       // the legend
  CHECK(doc.find(">slabhash</text>") != std::string::npos);
  CHECK(doc.find("<title>slabhash: ") != std::string::npos);  // a bar
  CHECK(doc.find(">point-queries</text>") != std::string::npos);  // a group's step
  CHECK(doc.find(">cleanup</text>") == std::string::npos);    // no rate, no group
  CHECK(doc.size() > 2000);
  CHECK(doc.compare(doc.size() - 7, 7, "</svg>\n") == 0);
  check_usage_error("compare examples/quickstart.yaml --chart rates.png", "--chart writes SVG");

  check_usage_error("compare examples/quickstart.yaml --structures nope", "unknown structure 'nope'");
  check_usage_error("compare examples/quickstart.yaml --backend cpu --structures slabhash",
                    "no structure can run examples/quickstart.yaml");
  check_usage_error("compare missing.yaml", "missing.yaml: no such file");

  const auto k = run_gpudict("check examples/quickstart.yaml");
  REQUIRE(k.exit_code == 0);
  CHECK(k.out.find("sorted-array: can run it") != std::string::npos);
  CHECK(k.out.find("btree: cannot run it: ") != std::string::npos);
  const auto h = run_gpudict("check examples/hash-quickstart.yaml --format json");
  REQUIRE(h.exit_code == 0);
  CHECK(h.out.find("{\"name\":\"slabhash\",\"can_run\":true") != std::string::npos);
}

TEST_CASE("cli: the CPU backend says what it ignores and reports host time") {
  const auto r = run_gpudict("lsm examples/quickstart.yaml --backend cpu --batch-size 1024 --lookup-filter off");
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.find("the CPU reference ignores --batch-size, --lookup-filter (options of the GPU lsm)") !=
        std::string::npos);
  CHECK(r.out.find("host_ms") != std::string::npos);
  CHECK(r.out.find("device_ms") == std::string::npos);
  CHECK(r.out.find("ms host (the CPU reference)") != std::string::npos);
  CHECK(r.out.find("device memory peak") == std::string::npos);
  const auto plain = run_gpudict("lsm examples/quickstart.yaml --backend cpu");
  CHECK(plain.err.find("ignores") == std::string::npos);
  // Options are still validated.
  const auto bad = run_gpudict("lsm examples/quickstart.yaml --backend cpu --batch-size 3");
  CHECK(bad.exit_code == 2);
  // --repeat: the spread, in text and (every sample) in JSON.
  const auto rep = run_gpudict("sorted-array examples/quickstart.yaml --backend cpu --repeat 3 --no-verify");
  REQUIRE(rep.exit_code == 0);
  CHECK(rep.out.find("min-max") != std::string::npos);
  const auto js = run_gpudict("sorted-array examples/quickstart.yaml --backend cpu --repeat 3 --no-verify --format json");
  REQUIRE(js.exit_code == 0);
  CHECK(js.out.find("\"device_ms_min\":") != std::string::npos);
  CHECK(js.out.find("\"device_ms_max\":") != std::string::npos);
  const auto at = js.out.find("\"device_ms_samples\":[");
  REQUIRE(at != std::string::npos);
  const std::string samples = js.out.substr(at, js.out.find(']', at) - at);
  CHECK(std::count(samples.begin(), samples.end(), ',') == 2);  // three samples
}

TEST_CASE("cli: JSON figures are numbers where they are numbers") {
  const auto r = run_gpudict("lsm examples/quickstart.yaml --backend cpu --format json");
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("\"final_stats\":{\"snapshots\":0}") != std::string::npos);
  CHECK(r.out.find("\"semantics\":\"map\"") != std::string::npos);  // text stays a string
}

TEST_CASE("cli: help is wrapped to the width (100 columns when stdout is not a terminal)") {
  for (const char* sub : {"", "sorted-array", "lsm", "btree", "slabhash", "compare", "gen", "check", "info"}) {
    CAPTURE(sub);
    const auto h = run_gpudict(std::string(sub) + " --help");
    REQUIRE(h.exit_code == 0);
    size_t longest = 0;
    for (const auto& l : lines_of(h.out)) longest = std::max(longest, l.size());
    CHECK(longest <= 100);
  }
  // The top-level list gives each structure's summary, not its whole description.
  const auto top = run_gpudict("--help");
  CHECK(top.out.find("never merge nodes") == std::string::npos);
  CHECK(run_gpudict("btree --help").out.find("never merge nodes") != std::string::npos);
}

TEST_CASE("cli: every structure option shows its type, range or choices in --help") {
  for (const auto& info : gpudict::structures()) {
    if (!info.make_gpu) continue;
    const auto h = run_gpudict(info.name + " --help");
    REQUIRE(h.exit_code == 0);
    for (const auto& o : info.options) {
      CAPTURE(info.name);
      CAPTURE(o.name);
      CHECK(o.type != "TEXT");
      CHECK(h.out.find("--" + o.name + " " + o.type) != std::string::npos);
    }
  }
}

TEST_CASE("cli: --repeat replays the recorded workload and verifies the first pass") {
  auto one = run_gpudict("sorted-array examples/quickstart.yaml --backend cpu --format json");
  auto three = run_gpudict("sorted-array examples/quickstart.yaml --backend cpu --format json --repeat 3");
  REQUIRE(one.exit_code == 0);
  REQUIRE(three.exit_code == 0);
  CHECK(three.out.find("\"checked\":46693,\"mismatches\":0") != std::string::npos);
  CHECK(one.out.find("\"checked\":46693,\"mismatches\":0") != std::string::npos);
}

TEST_CASE("cli: structure options are checked by their declared type before anything runs") {
  struct Case {
    const char* args;
    const char* message;
  };
  for (const Case& c : {Case{"btree examples/quickstart.yaml --tile 7", "--tile: '7' is not one of 32, 16, 8"},
                        Case{"lsm examples/quickstart.yaml --batch-size abc", "--batch-size: 'abc' is not a non-negative integer"},
                        Case{"lsm examples/quickstart.yaml --batch-size -4", "--batch-size: '-4' is not a non-negative integer"},
                        Case{"lsm examples/quickstart.yaml --cleanup-stale-fraction half",
                             "--cleanup-stale-fraction: 'half' is not a number"},
                        Case{"slabhash examples/hash-quickstart.yaml --mode dict",
                             "--mode: 'dict' is not one of map, multimap, set"}}) {
    auto r = run_gpudict(std::string(c.args) + " --backend cpu");
    CHECK_MESSAGE(r.exit_code == 2, c.args);
    CHECK_MESSAGE(r.err.find(c.message) != std::string::npos, c.args << ": " << r.err);
  }
  // Hex, as the structures read integers, and the range checks stay the structure's.
  CHECK(run_gpudict("lsm examples/quickstart.yaml --backend cpu -q --batch-size 0x1000").exit_code == 0);
  auto range = run_gpudict("lsm examples/quickstart.yaml --backend cpu -q --batch-size 1000");
  CHECK(range.exit_code == 2);
  CHECK(range.err.find("power of two") != std::string::npos);
}

TEST_CASE("cli: a library error that names an option gets the flag that sets it") {
  using gpudict::cli_message;
  CHECK(cli_message(gpudict::RuntimeFailure("pool full", "node_pool")) == "pool full (command line: --node-pool)");
  CHECK(cli_message(gpudict::RuntimeFailure("no slab", "growth")) ==
        "no slab (command line: --pool-growth on or ahead, or a larger --pool-slabs)");
  CHECK(cli_message(gpudict::InputError("bad")) == "bad");
  CHECK(gpudict::exit_code_for(gpudict::InputError("bad", "load_factor")) == 2);
  CHECK(gpudict::exit_code_for(gpudict::DeviceOutOfMemory("oom")) == 3);
}

TEST_CASE("cli: --devices shards a run; its results equal the unsharded run's") {
  for (const char* structure : {"sorted-array", "lsm", "btree", "slabhash"}) {
    const std::string s = structure;
    const std::string ex = s == "slabhash" ? "examples/hash-quickstart.yaml"
                           : s == "btree"  ? "examples/mixed-concurrent.yaml"
                                           : "examples/snapshots.yaml";
    const std::string one = temp_path("one.tsv"), three = temp_path("three.tsv");
    const std::string base = std::string(structure) + " " + ex + " --backend cpu --format json";
    auto a = run_gpudict(base + " --results " + one);
    auto b = run_gpudict(base + " --devices 0,1,0 --results " + three);
    INFO(structure << ": " << b.err);
    REQUIRE(a.exit_code == 0);
    REQUIRE(b.exit_code == 0);
    CHECK(b.out.find("\"shards\":3") != std::string::npos);
    CHECK(b.out.find("CPU reference (3 shards)") != std::string::npos);
    CHECK(b.out.find("\"mismatches\":0") != std::string::npos);
    CHECK(slurp(one) == slurp(three));
    std::remove(one.c_str());
    std::remove(three.c_str());
  }
  check_usage_error("sorted-array examples/quickstart.yaml --backend cpu --device 1 --devices 0,1", "excludes");
  check_usage_error("sorted-array examples/quickstart.yaml --backend cpu --devices 0,x", "not a CUDA device index");
  check_usage_error("graph examples/graph-rmat.yaml --backend cpu --devices 0,1", "graph cannot be sharded");
}
