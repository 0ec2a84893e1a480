// YAML workload parsing and validation (workloads/spec.hpp).
#include <doctest/doctest.h>

#include "cli/exit_codes.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "core/common/errors.hpp"
#include "workloads/generator.hpp"
#include "workloads/keyfile.hpp"
#include "workloads/spec.hpp"
#include "scratch_dir.hpp"
#include "workloads/workload.hpp"

using namespace gpudict;
namespace fs = std::filesystem;

namespace {

fs::path spec_tmp_dir() { return gpudict::testing::scratch_dir(); }

std::string write_yaml(const std::string& name, const std::string& text) {
  const fs::path p = spec_tmp_dir() / name;
  std::ofstream(p, std::ios::binary) << text;
  return p.string();
}

std::string write_bytes(const std::string& name, const std::vector<unsigned char>& bytes) {
  const fs::path p = spec_tmp_dir() / name;
  std::ofstream(p, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()),
                                           static_cast<std::streamsize>(bytes.size()));
  return p.string();
}

// Parses `text` and returns the InputError message ("" if none was thrown).
std::string parse_error(const std::string& text, const std::string& name = "bad.yaml") {
  const std::string path = write_yaml(name, text);
  try {
    parse_workload_spec(path);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// The message must start with PATH:LINE:COL: FIELD: and contain `what`.
void check_error_at(const std::string& text, int line, int col, const std::string& field, const std::string& what) {
  const std::string path = (spec_tmp_dir() / "bad.yaml").string();
  const std::string msg = parse_error(text);
  INFO("yaml:\n" << text << "message: " << msg);
  REQUIRE(!msg.empty());
  const std::string prefix = path + ":" + std::to_string(line) + ":" + std::to_string(col) + ": " + field + ": ";
  CHECK(msg.rfind(prefix, 0) == 0);
  CHECK(msg.find(what) != std::string::npos);
  CHECK(msg.find('\n') == std::string::npos);
}

// As check_error_at, the column being where `token` first occurs in line `line`
// (1-based), after the token's leading spaces (" s" finds a lone "s").
void check_error(const std::string& text, int line, const std::string& token, const std::string& field,
                 const std::string& what) {
  size_t start = 0;
  for (int l = 1; l < line; ++l) start = text.find('\n', start) + 1;
  const std::string line_text = text.substr(start, text.find('\n', start) - start);
  const size_t col = line_text.find(token);
  REQUIRE(col != std::string::npos);
  const size_t lead = token.find_first_not_of(' ');
  check_error_at(text, line, static_cast<int>(col + lead) + 1, field, what);
}

const char* kFullExample = R"(name: quickstart
seed: 42
key_type: u32
value_type: u32
initial:
  count: 1000
  keys: {distribution: uniform, min: 10, max: 100000}
  values: index
steps:
  - phase:
      name: grow
      batches: 4
      batch_size: 65536
      mode: phased
      mix: {insert: 0.5, delete: 0.1, lookup: 0.2, count: 0.05, range: 0.05, successor: 0.1}
      keys: {distribution: zipfian, exponent: 0.99}
      hit_ratio: 0.25
      range_length: {distribution: fixed, length: 8, unit: keys}
  - snapshot: before
  - phase:
      batches: 2
      batch_size: 100
      mode: concurrent
      mix: {lookup: 1}
      keys: {distribution: sequential, start: 5, stride: 3, min: 100, max: 200}
      range_length: {distribution: uniform, min: 2, max: 9, unit: results}
      snapshot: before
  - phase:
      batches: 1
      batch_size: 10
      mix: {range: 0.5, count: 0.5}
      keys: {distribution: normal, mean: 0.25, stddev: 0.05}
      range_length: {distribution: geometric, mean: 3.5}
  - phase:
      batches: 1
      batch_size: 10
      mix: {successor: 1.0}
      keys: {distribution: hotset, hot_fraction: 0.02, hot_probability: 0.8, scramble: false}
      range_length: 12
  - batch:
      mode: phased
      snapshot: before
      ops:
        - [insert, 0, 7]
        - [delete, 0xFFFFFFFF]
        - [lookup, 5]
        - [count, 10, 3]
        - [range, 0, 4294967295]
        - [successor, 4294967295]
  - drop_snapshot: before
  - batch:
      name: tail
      mode: concurrent
      ops: [[insert, 1_000, 2], [lookup, 1000]]
)";

}  // namespace

TEST_CASE("workload: every feature of the schema parses") {
  const std::string path = write_yaml("full.yaml", kFullExample);
  const WorkloadSpec s = parse_workload_spec(path);
  CHECK(s.name == "quickstart");
  CHECK(s.seed == 42);
  CHECK(s.key_type == KeyType::U32);
  CHECK(s.value_type == KeyType::U32);
  CHECK(s.initial.source == InitialSpec::Source::Generated);
  CHECK(s.initial.count == 1000);
  CHECK(s.initial.keys.kind == DistKind::Uniform);
  CHECK(s.initial.keys.min == 10);
  CHECK(s.initial.keys.max == 100000);
  CHECK(s.initial.values == InitialValues::Index);
  REQUIRE(s.steps.size() == 8);

  const PhaseSpec& g = s.steps[0].phase;
  CHECK(s.steps[0].kind == StepSpecKind::Phase);
  CHECK(g.name == "grow");
  CHECK(g.batches == 4);
  CHECK(g.batch_size == 65536);
  CHECK(g.mode == ExecMode::Phased);
  CHECK(g.mix[static_cast<int>(OpType::Insert)] == doctest::Approx(0.5));
  CHECK(g.mix[static_cast<int>(OpType::Successor)] == doctest::Approx(0.1));
  CHECK(g.keys.kind == DistKind::Zipfian);
  CHECK(g.keys.exponent == doctest::Approx(0.99));
  CHECK(g.keys.scramble);
  CHECK(g.keys.max == 0xFFFFFFFFull);
  CHECK(g.hit_ratio == doctest::Approx(0.25));
  CHECK(g.range_length.kind == RangeLenKind::Fixed);
  CHECK(g.range_length.length == 8);
  CHECK(g.range_length.unit == RangeUnit::Keys);
  CHECK(g.snapshot.empty());

  CHECK(s.steps[1].kind == StepSpecKind::Snapshot);
  CHECK(s.steps[1].name == "before");

  const PhaseSpec& p2 = s.steps[2].phase;
  CHECK(p2.name == "phase2");  // default: phase<index in steps>
  CHECK(p2.mode == ExecMode::Concurrent);
  CHECK(p2.hit_ratio == doctest::Approx(0.5));  // default
  CHECK(p2.keys.kind == DistKind::Sequential);
  CHECK(p2.keys.start == 5);
  CHECK(p2.keys.stride == 3);
  CHECK(p2.keys.min == 100);
  CHECK(p2.keys.max == 200);
  CHECK(p2.range_length.kind == RangeLenKind::Uniform);
  CHECK(p2.range_length.min == 2);
  CHECK(p2.range_length.max == 9);
  CHECK(p2.range_length.unit == RangeUnit::Results);
  CHECK(p2.snapshot == "before");

  const PhaseSpec& p3 = s.steps[3].phase;
  CHECK(p3.keys.kind == DistKind::Normal);
  CHECK(p3.keys.mean == doctest::Approx(0.25));
  CHECK(p3.keys.stddev == doctest::Approx(0.05));
  CHECK(p3.range_length.kind == RangeLenKind::Geometric);
  CHECK(p3.range_length.mean == doctest::Approx(3.5));

  const PhaseSpec& p4 = s.steps[4].phase;
  CHECK(p4.keys.kind == DistKind::Hotset);
  CHECK(p4.keys.hot_fraction == doctest::Approx(0.02));
  CHECK(p4.keys.hot_probability == doctest::Approx(0.8));
  CHECK_FALSE(p4.keys.scramble);
  CHECK(p4.range_length.kind == RangeLenKind::Fixed);
  CHECK(p4.range_length.length == 12);

  const StepSpec& b = s.steps[5];
  CHECK(b.kind == StepSpecKind::Batch);
  CHECK(b.name == "batch5");
  CHECK(b.batch.mode == ExecMode::Phased);
  CHECK(b.batch.snapshot == "before");
  REQUIRE(b.batch.size() == 6);
  CHECK(b.batch.types[0] == OpType::Insert);
  CHECK(b.batch.keys[0] == 0);
  CHECK(b.batch.args[0] == 7);
  CHECK(b.batch.types[1] == OpType::Delete);
  CHECK(b.batch.keys[1] == 0xFFFFFFFFull);
  CHECK(b.batch.types[3] == OpType::Count);
  CHECK(b.batch.keys[3] == 10);
  CHECK(b.batch.args[3] == 3);
  CHECK(b.batch.types[4] == OpType::Range);
  CHECK(b.batch.args[4] == 4294967295ull);
  CHECK(b.batch.types[5] == OpType::Successor);

  CHECK(s.steps[6].kind == StepSpecKind::DropSnapshot);
  CHECK(s.steps[6].name == "before");
  CHECK(s.steps[7].name == "tail");
  CHECK(s.steps[7].batch.mode == ExecMode::Concurrent);
  CHECK(s.steps[7].batch.keys[0] == 1000);  // '_' separators
}

TEST_CASE("workload: defaults") {
  const std::string path = write_yaml("my-defaults.yaml", R"(steps:
  - phase: {batches: 1, batch_size: 10, mix: {lookup: 1}}
)");
  const WorkloadSpec s = parse_workload_spec(path);
  CHECK(s.name == "my-defaults");
  CHECK(s.seed == 1);
  CHECK(s.key_type == KeyType::U32);
  CHECK(s.value_type == KeyType::U32);
  CHECK(s.initial.source == InitialSpec::Source::None);
  REQUIRE(s.steps.size() == 1);
  const PhaseSpec& p = s.steps[0].phase;
  CHECK(p.name == "phase0");
  CHECK(p.mode == ExecMode::Phased);
  CHECK(p.keys.kind == DistKind::Uniform);
  CHECK(p.keys.min == 0);
  CHECK(p.keys.max == 0xFFFFFFFFull);
  CHECK(p.hit_ratio == doctest::Approx(0.5));
  CHECK(p.range_length.kind == RangeLenKind::Fixed);
  CHECK(p.range_length.length == 8);
  CHECK(p.range_length.unit == RangeUnit::Keys);

  // Distribution shorthand, empty file steps.
  const WorkloadSpec t = parse_workload_spec(write_yaml("short.yaml", "initial: {count: 5, keys: zipfian}\n"));
  CHECK(t.initial.keys.kind == DistKind::Zipfian);
  CHECK(t.initial.keys.exponent == doctest::Approx(0.99));
  CHECK(t.steps.empty());
}

TEST_CASE("workload: u64 key and value types parse, with keys above 2^32") {
  const std::string path = write_yaml("u64.yaml", R"(key_type: u64
value_type: u64
initial: {count: 10, keys: {distribution: uniform, min: 0x100000000, max: 0xFFFFFFFFFFFFFFFF}}
steps:
  - batch:
      ops: [[insert, 18446744073709551615, 18446744073709551615], [lookup, 0x123456789]]
)");
  const WorkloadSpec s = parse_workload_spec(path);
  CHECK(s.key_type == KeyType::U64);
  CHECK(s.value_type == KeyType::U64);
  CHECK(s.initial.keys.min == 0x100000000ull);
  CHECK(s.initial.keys.max == ~0ull);
  CHECK(s.steps[0].batch.keys[0] == ~0ull);
  CHECK(s.steps[0].batch.args[0] == ~0ull);
  CHECK(s.steps[0].batch.keys[1] == 0x123456789ull);
}

TEST_CASE("workload: malformed YAML reports file:line:column") {
  check_error_at("seed: 1\nsteps:\n  - phase: {batches: 1, batch_size: 2\n", 4, 1, "yaml", "malformed YAML");
  check_error("seed: 1\n  bad: [1, 2\n", 2, ":", "yaml", "malformed YAML");
  // Not a map at all.
  check_error_at("- 1\n- 2\n", 1, 1, "workload", "not a map");
  check_error_at("", 1, 1, "workload", "empty");
}

TEST_CASE("workload: unknown fields are rejected with a suggestion") {
  check_error("sed: 3\n", 1, "sed", "sed", "unknown field, did you mean 'seed'?");
  check_error("steps:\n  - phase:\n      batches: 1\n      bach_size: 4\n      mix: {lookup: 1}\n", 4, "bach_size",
              "steps[0].phase.bach_size", "did you mean 'batch_size'?");
  check_error("initial:\n  cuont: 5\n", 2, "cuont", "initial.cuont", "did you mean 'count'?");
  check_error("steps:\n  - phase: {batches: 1, batch_size: 2, mix: {lokup: 1}}\n", 2, "lokup",
              "steps[0].phase.mix.lokup", "did you mean 'lookup'?");
  check_error("steps:\n  - phsae: {}\n", 2, "phsae", "steps[0].phsae", "did you mean 'phase'?");
  check_error("steps:\n  - batch:\n      ops: [[lokup, 5]]\n", 3, "lokup", "steps[0].batch.ops[0]",
              "unknown operation 'lokup', did you mean 'lookup'?");
  check_error("initial: {count: 5, valeus: key}\n", 1, "valeus", "initial.valeus", "did you mean 'values'?");
  // A parameter of another distribution.
  check_error("initial: {count: 5, keys: {distribution: uniform, exponent: 2}}\n", 1, "exponent",
              "initial.keys.exponent", "not a parameter of distribution 'uniform'");
  // No suggestion for something far from every valid name, but the list of valid names.
  const std::string msg = parse_error("zzzzzzzzzz: 1\n");
  CHECK(msg.find("did you mean") == std::string::npos);
  CHECK(msg.find("expected one of: name, seed, key_type, value_type, undirected, initial, steps") != std::string::npos);
  // A field given twice.
  check_error_at("seed: 1\nseed: 2\n", 2, 1, "seed", "twice");
}

TEST_CASE("workload: wrong types") {
  check_error("seed: abc\n", 1, "abc", "seed", "'abc' is not an integer");
  check_error("seed: 1.5\n", 1, "1.5", "seed", "not an integer");
  check_error("key_type: u16\n", 1, "u16", "key_type", "unknown type 'u16'");
  check_error("name: [a]\n", 1, "[", "name", "got a list");
  check_error("steps:\n  - phase: {batches: many, batch_size: 2, mix: {lookup: 1}}\n", 2, "many",
              "steps[0].phase.batches", "not an integer");
  check_error("steps:\n  - phase: {batches: 1, batch_size: 2, mix: [1, 2]}\n", 2, "[", "steps[0].phase.mix",
              "got a list");
  check_error("steps:\n  - phase: {batches: 1, batch_size: 2, mix: {lookup: 1}, hit_ratio: x}\n", 2, "x}",
              "steps[0].phase.hit_ratio", "'x' is not a finite number");
  check_error("steps:\n  - phase: {batches: 1, batch_size: 2, mix: {lookup: 1}, hit_ratio: 1.5}\n", 2, "1.5",
              "steps[0].phase.hit_ratio", "1.5 is out of range");
  check_error("steps:\n  - phase: {batches: 1, batch_size: 2, mix: {lookup: 1}, mode: parallel}\n", 2, "parallel",
              "steps[0].phase.mode", "unknown mode 'parallel'");
  check_error("steps: 5\n", 1, "5", "steps", "got '5'");
  check_error("steps:\n  - snapshot: [a]\n", 2, "[a]", "steps[0].snapshot", "got a list");
  check_error("initial: {count: 5, keys: {distribution: zipfian, scramble: maybe}}\n", 1, "maybe",
              "initial.keys.scramble", "not a boolean");
  check_error("initial: 7\n", 1, "7", "initial", "got '7'");
  check_error("steps:\n  - phase: {}\n    batch: {}\n", 2, "phase", "steps[0]", "exactly one of");
}

TEST_CASE("workload: operation mixes must sum to 1") {
  check_error("steps:\n  - phase:\n      batches: 1\n      batch_size: 2\n      mix: {insert: 0.5, lookup: 0.4}\n", 5,
              "{", "steps[0].phase.mix", "operation mix sums to 0.9");
  check_error("steps:\n  - phase: {batches: 1, batch_size: 2, mix: {insert: 0.7, lookup: 0.4}}\n", 2, "{insert",
              "steps[0].phase.mix", "sums to 1.1");
  check_error("steps:\n  - phase: {batches: 1, batch_size: 2, mix: {insert: -0.5, lookup: 1.5}}\n", 2, "-0.5",
              "steps[0].phase.mix.insert", "out of range");
  check_error("steps:\n  - phase: {batches: 1, batch_size: 2}\n", 2, "{", "steps[0].phase.mix", "missing");
  // Within 1e-9 is fine.
  CHECK(parse_error("steps:\n  - phase: {batches: 1, batch_size: 2, mix: {insert: 0.3333333333, lookup: "
                    "0.3333333333, delete: 0.3333333334}}\n")
            .empty());
}

TEST_CASE("workload: zero and negative sizes and counts") {
  check_error("steps:\n  - phase: {batches: 0, batch_size: 2, mix: {lookup: 1}}\n", 2, "0,",
              "steps[0].phase.batches", "zero");
  check_error("steps:\n  - phase: {batches: 1, batch_size: -5, mix: {lookup: 1}}\n", 2, "-5",
              "steps[0].phase.batch_size", "negative value -5");
  check_error("initial:\n  count: 0\n", 2, "0", "initial.count", "zero");
  check_error("initial:\n  count: -3\n", 2, "-3", "initial.count", "negative");
  check_error("steps:\n  - phase: {batches: 1, batch_size: 8589934592, mix: {lookup: 1}}\n", 2, "8589934592",
              "steps[0].phase.batch_size", "too large");
  check_error("steps:\n  - phase: {batches: 1, batch_size: 2, mix: {count: 1}, range_length: {length: 0}}\n", 2,
              "0}", "steps[0].phase.range_length.length", "zero");
  check_error("steps:\n  - phase: {batches: 1, batch_size: 2, mix: {count: 1}, range_length: {distribution: "
              "geometric, mean: 0.5}}\n",
              2, "0.5", "steps[0].phase.range_length.mean", "out of range");
  check_error("steps:\n  - batch: {ops: []}\n", 2, "[]", "steps[0].batch.ops", "empty batch");
  check_error("initial: {count: 1}\nsteps:\n  - phase: {batches: 1}\n", 3, "{", "steps[0].phase.batch_size",
              "missing");
  check_error("initial: {keys: uniform}\n", 1, "{", "initial.count", "missing");
  check_error("initial:\n  keys: uniform\n", 2, "keys", "initial.count", "missing");
}

TEST_CASE("workload: unknown distribution names") {
  check_error("initial: {count: 5, keys: {distribution: zipf}}\n", 1, "zipf", "initial.keys.distribution",
              "unknown distribution 'zipf', did you mean 'zipfian'?");
  check_error("initial: {count: 5, keys: gaussian}\n", 1, "gaussian", "initial.keys",
              "unknown distribution 'gaussian'");
  check_error("initial: {count: 5, keys: {distribution: unifrom}}\n", 1, "unifrom", "initial.keys.distribution",
              "did you mean 'uniform'?");
  check_error(
      "steps:\n  - phase: {batches: 1, batch_size: 2, mix: {range: 1}, range_length: {distribution: fixd}}\n", 2,
      "fixd", "steps[0].phase.range_length.distribution", "did you mean 'fixed'?");
  check_error("initial: {count: 5, keys: {distribution: zipfian, exponent: 0}}\n", 1, "0}", "initial.keys.exponent",
              "out of range");
  check_error("initial: {count: 5, keys: {distribution: hotset, hot_fraction: 0}}\n", 1, "0}",
              "initial.keys.hot_fraction", "out of range");
  check_error("initial: {count: 5, keys: {distribution: uniform, min: 10, max: 5}}\n", 1, "10", "initial.keys.min",
              "min 10 is above max 5");
}

TEST_CASE("workload: snapshot names are checked in order") {
  check_error("steps:\n  - phase: {batches: 1, batch_size: 2, mix: {lookup: 1}, snapshot: s}\n", 2, "s}",
              "steps[0].phase.snapshot", "snapshot 's' is used before it is created");
  check_error("steps:\n  - snapshot: s\n  - drop_snapshot: s\n  - batch: {snapshot: s, ops: [[lookup, 1]]}\n", 4, "s,",
              "steps[2].batch.snapshot", "used after drop_snapshot at line 3");
  check_error("steps:\n  - snapshot: s\n  - drop_snapshot: s\n  - drop_snapshot: s\n", 4, " s", "steps[2].drop_snapshot",
              "dropped twice (first at line 3)");
  check_error("steps:\n  - drop_snapshot: t\n", 2, " t", "steps[0].drop_snapshot", "does not exist");
  check_error_at("steps:\n  - snapshot: s\n  - snapshot: s\n", 3, 15, "steps[1].snapshot", "already exists");
  // Re-creating a dropped name is fine.
  CHECK(parse_error("steps:\n  - snapshot: s\n  - drop_snapshot: s\n  - snapshot: s\n  - batch: {snapshot: s, ops: "
                    "[[lookup, 1]]}\n")
            .empty());
}

TEST_CASE("workload: key values out of range for the key type") {
  check_error("steps:\n  - batch: {ops: [[lookup, 4294967296]]}\n", 2, "4294967296", "steps[0].batch.ops[0]",
              "key 4294967296 is out of range");
  check_error("steps:\n  - batch: {ops: [[insert, 1, 0x100000000]]}\n", 2, "0x100000000", "steps[0].batch.ops[0]",
              "value 4294967296 is out of range");
  check_error("initial: {count: 5, keys: {distribution: uniform, max: 0x100000000}}\n", 1, "0x1", "initial.keys.max",
              "out of range");
  check_error("key_type: u64\nsteps:\n  - batch: {ops: [[lookup, 18446744073709551616]]}\n", 3, "18446744073709551616",
              "steps[0].batch.ops[0]", "does not fit in 64 bits");
  check_error("steps:\n  - batch: {ops: [[count, 1]]}\n", 2, "[count", "steps[0].batch.ops[0]",
              "count with 1 arguments");
  check_error("steps:\n  - batch: {ops: [[lookup, 1, 2]]}\n", 2, "[lookup", "steps[0].batch.ops[0]",
              "lookup with 2 arguments");
  check_error("steps:\n  - batch: {ops: [5]}\n", 2, "5", "steps[0].batch.ops[0]", "got '5'");
}

TEST_CASE("workload: a width override replaces key_type and value_type, not the widths of files") {
  const WidthOverride u64s{KeyType::U64, KeyType::U64};
  // A literal above 2^32 is refused at the YAML's u32 and accepted at u64.
  const std::string path = write_yaml(
      "widen.yaml",
      "initial: {count: 1000, keys: uniform}\nsteps:\n  - batch: {ops: [[insert, 0x100000000, 0x1FFFFFFFF]]}\n");
  CHECK_THROWS_AS(parse_workload_spec(path), InputError);
  const WorkloadSpec s = parse_workload_spec(path, u64s);
  CHECK(s.key_type == KeyType::U64);
  CHECK(s.value_type == KeyType::U64);
  CHECK(s.initial.keys.max == ~0ull);
  // Uniform keys are drawn from the whole u64 domain.
  const KeyValues kv = generate_initial(s);
  REQUIRE(kv.size() == 1000);
  CHECK(std::count_if(kv.keys.begin(), kv.keys.end(), [](uint64_t k) { return k > 0xFFFFFFFFull; }) > 900);
  CHECK(std::count_if(kv.values.begin(), kv.values.end(), [](uint64_t v) { return v > 0xFFFFFFFFull; }) > 900);
  // Narrowing checks the YAML's literals against the new width.
  const std::string wide = write_yaml("narrow.yaml", "key_type: u64\nsteps:\n  - batch: {ops: [[lookup, 0x100000000]]}\n");
  CHECK(parse_workload_spec(wide).key_type == KeyType::U64);
  CHECK_THROWS_WITH_AS(parse_workload_spec(wide, WidthOverride{KeyType::U32, {}}), doctest::Contains("out of range"),
                       InputError);
  // Key and value files keep the widths the YAML declares (u32 here).
  write_bytes("keys32.bin", {1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF});
  write_bytes("vals32.bin", {9, 0, 0, 0, 8, 0, 0, 0, 7, 0, 0, 0, 0xFE, 0xFF, 0xFF, 0xFF});
  const WorkloadSpec f =
      parse_workload_spec(write_yaml("files.yaml", "initial: {file: keys32.bin, values: {file: vals32.bin}}\n"), u64s);
  CHECK(f.initial.file.width == 4);
  CHECK(f.initial.values_file_width == 4);
  const KeyValues fk = generate_initial(f);
  CHECK(fk.keys == std::vector<uint64_t>{1, 2, 3, 0xFFFFFFFFull});
  CHECK(fk.values == std::vector<uint64_t>{9, 8, 7, 0xFFFFFFFEull});
}

TEST_CASE("workload: unique initial keys must fit the distribution's domain") {
  check_error("initial: {count: 11, keys: {distribution: uniform, min: 0, max: 9}}\n", 1, "11", "initial.count",
              "more than the 10 keys");
  check_error("initial: {count: 6, keys: {distribution: sequential, stride: 2, min: 0, max: 9}}\n", 1, "6",
              "initial.count", "repeat after 5 keys");
  CHECK(parse_error("initial: {count: 10, keys: {distribution: sequential, stride: 3, min: 0, max: 9}}\n").empty());
}

TEST_CASE("workload: key files named by the workload") {
  // A raw file of 3 u32 keys plus one stray byte.
  write_bytes("odd.bin", {1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 9});
  check_error("initial:\n  file: odd.bin\n", 2, "odd", "initial.file", "not a multiple of the key width 4");
  // Forced SOSD whose header says more keys than the file holds.
  write_bytes("short.sosd", {5, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0});
  check_error("initial:\n  file: short.sosd\n  format: sosd\n", 2, "short", "initial.file",
              "truncated SOSD file: header says 5 keys, file holds 2 u64 keys or 4 u32 keys");
  write_bytes("tiny.sosd", {5, 0, 0});
  check_error("initial:\n  file: tiny.sosd\n  format: sosd\n", 2, "tiny", "initial.file", "truncated SOSD file");
  // A missing file: the path is resolved against the YAML file's directory.
  check_error("initial:\n  file: data/none.bin\n", 2, "data", "initial.file",
              (spec_tmp_dir() / "data/none.bin").string() + ": no such file");
  // count larger than the file holds.
  write_bytes("four.bin", {1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4, 0, 0, 0});
  check_error("initial:\n  file: four.bin\n  count: 5\n", 3, "5", "initial.count",
              "count 5 is larger than the file holds (4 keys");
  // keys with file; width with sosd; width not 4/8; format without file.
  check_error("initial:\n  file: four.bin\n  keys: uniform\n", 3, "keys", "initial.keys", "cannot be combined");
  check_error("initial:\n  file: four.bin\n  width: 2\n", 3, "2", "initial.width", "4 or 8");
  check_error("initial:\n  file: short.sosd\n  format: sosd\n  width: 8\n", 4, "width", "initial.width",
              "raw files only");
  check_error("initial:\n  count: 3\n  format: raw\n", 3, "format", "initial.format", "only meaningful with file");
  // Values file too short, or missing.
  check_error("initial:\n  file: four.bin\n  values: {file: odd.bin}\n", 3, "odd", "initial.values.file",
              "fewer than the 4 initial keys");
  check_error("initial:\n  file: four.bin\n  values: {file: nothing.bin}\n", 3, "nothing", "initial.values.file",
              "no such file");
  check_error("initial:\n  file: four.bin\n  values: {fiel: x}\n", 3, "fiel", "initial.values.fiel",
              "did you mean 'file'?");

  // The valid cases: relative path, count, width, format.
  const WorkloadSpec s = parse_workload_spec(write_yaml("ok.yaml", "initial: {file: four.bin, count: 3, width: 4}\n"));
  CHECK(s.initial.source == InitialSpec::Source::File);
  CHECK(s.initial.count == 3);
  CHECK(s.initial.file.count == 4);
  CHECK(s.initial.file.format == KeyFileFormat::Raw);
  CHECK(s.initial.file.path == (spec_tmp_dir() / "four.bin").string());
  const WorkloadSpec t =
      parse_workload_spec(write_yaml("ok2.yaml", "initial: {file: short.sosd, format: raw, width: 8}\n"));
  CHECK(t.initial.count == 3);
  CHECK(t.initial.file.width == 8);
}

TEST_CASE("workload: an empty key file is refused unless initial says allow_empty") {
  const std::string empty_raw = write_bytes("empty.bin", {});
  const std::string empty_sosd = write_bytes("empty.sosd", {0, 0, 0, 0, 0, 0, 0, 0});
  write_bytes("four.bin", {1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4, 0, 0, 0});
  // Refused, naming the file, what is empty and how to allow it: raw (auto and
  // forced), SOSD with a zero count (auto and forced), and allow_empty: false.
  for (const std::string fmt : {"", "\n  format: raw", "\n  allow_empty: false"}) {
    check_error("initial:\n  file: empty.bin" + fmt + "\n", 2, "empty", "initial.file",
                empty_raw + ": empty key file: 0 bytes, no keys (at least one key; to start from it empty on "
                            "purpose, add allow_empty: true to initial)");
  }
  for (const std::string fmt : {"", "\n  format: sosd"}) {
    check_error("initial:\n  file: empty.sosd" + fmt + "\n", 2, "empty", "initial.file",
                empty_sosd + ": empty key file: its SOSD header says 0 keys (at least one key; to start from it "
                             "empty on purpose, add allow_empty: true to initial)");
  }
  // The field is checked like any other.
  check_error("initial: {file: empty.bin, allow_empty: yes}\n", 1, "yes", "initial.allow_empty",
              "'yes' is not a boolean (true or false)");
  check_error("initial: {file: empty.bin, alow_empty: true}\n", 1, "alow_empty", "initial.alow_empty",
              "unknown field, did you mean 'allow_empty'?");
  check_error("initial: {count: 3, allow_empty: true}\n", 1, "allow_empty", "initial.allow_empty",
              "only meaningful with file");
  // A count of 0 is not the way to an empty start; the message says what is.
  check_error("initial:\n  count: 0\n", 2, "0", "initial.count", "zero (a positive integer; for an empty initial "
                                                                  "contents leave initial out)");
  // An empty values file next to keys is too short, as any short values file.
  check_error("initial:\n  file: four.bin\n  values: {file: empty.bin}\n", 3, "empty", "initial.values.file",
              "holds 0 values of 4 bytes, fewer than the 4 initial keys");

  // Accepted with allow_empty: true: an empty Initial step, then the steps.
  for (const std::string file : {"empty.bin", "empty.sosd"}) {
    INFO(file);
    const std::string path =
        write_yaml("allowed.yaml", "initial: {file: " + file + ", allow_empty: true, values: {file: empty.bin}}\n"
                                   "steps:\n  - batch: {ops: [[lookup, 5], [insert, 5, 1]]}\n");
    const WorkloadSpec spec = parse_workload_spec(path);
    CHECK(spec.initial.source == InitialSpec::Source::File);
    CHECK(spec.initial.count == 0);
    CHECK(spec.initial.values == InitialValues::File);
    std::unique_ptr<StepSource> src = open_workload(path);
    Step st;
    REQUIRE(src->next(st));
    CHECK(st.kind == StepKind::Initial);
    CHECK(st.initial.keys.empty());
    CHECK(st.initial.values.empty());
    REQUIRE(src->next(st));
    CHECK(st.kind == StepKind::Phase);
    REQUIRE(src->next(st));
    CHECK(st.kind == StepKind::Batch);
    CHECK(st.batch.size() == 2);
    CHECK_FALSE(src->next(st));
    CHECK(summarize_workload(path).initial == 0);
  }
  // allow_empty on a file that has keys changes nothing.
  const WorkloadSpec four = parse_workload_spec(write_yaml("four.yaml", "initial: {file: four.bin, allow_empty: true}\n"));
  CHECK(four.initial.count == 4);
  // Leaving initial out is an empty start too.
  const WorkloadSpec none = parse_workload_spec(write_yaml("none.yaml", "steps:\n  - batch: {ops: [[lookup, 5]]}\n"));
  CHECK(none.initial.source == InitialSpec::Source::None);
  CHECK(none.initial.count == 0);
}

TEST_CASE("workload: the workload file itself: missing, a directory") {
  const std::string missing = (spec_tmp_dir() / "no-such-workload.bin").string();
  const std::string dir = (spec_tmp_dir() / "a-dir.yaml").string();
  fs::create_directories(dir);
  auto message = [](const std::function<void()>& f) -> std::string {
    try {
      f();
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  };
  const std::string kinds = " (a YAML workload, an operation trace, a graph file or a key file)";
  CHECK(message([&] { check_workload_file(missing); }) == missing + ": no such file" + kinds);
  CHECK(message([&] { check_workload_file(dir); }) == dir + ": is a directory" + kinds);
  // open and summarize check it first, whatever the name says the kind is.
  CHECK(message([&] { open_workload(dir); }) == dir + ": is a directory" + kinds);
  CHECK(message([&] { summarize_workload(dir); }) == dir + ": is a directory" + kinds);
  CHECK(message([&] { summarize_workload(missing); }) == missing + ": no such file" + kinds);
  // A file under a path component that is not a directory does not exist.
  const std::string under = write_bytes("plain.bin", {1, 0, 0, 0}) + "/x.yaml";
  CHECK(message([&] { check_workload_file(under); }) == under + ": no such file" + kinds);
  CHECK(message([&] { check_workload_file(write_bytes("plain2.bin", {1, 0, 0, 0})); }).empty());
}

TEST_CASE("workload: a missing YAML file") {
  try {
    parse_workload_spec((spec_tmp_dir() / "nope.yaml").string());
    FAIL("expected InputError");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("nope.yaml: no such file") != std::string::npos);
    CHECK(exit_code_for(e) == 2);
  }
  CHECK_THROWS_AS(open_workload((spec_tmp_dir() / "nope.yaml").string()), InputError);
  CHECK_THROWS_AS(open_workload((spec_tmp_dir() / "nope.bin").string()), InputError);
}

TEST_CASE("workload: edit distance") {
  CHECK(edit_distance("", "") == 0);
  CHECK(edit_distance("abc", "abc") == 0);
  CHECK(edit_distance("kitten", "sitting") == 3);
  CHECK(edit_distance("bach_size", "batch_size") == 1);
  CHECK(edit_distance("", "seed") == 4);
}

TEST_CASE("workload: keys from a file out of range for the key type") {
  // SOSD u64 file whose third key does not fit in u32: found when the keys are read.
  std::vector<unsigned char> b = {3, 0, 0, 0, 0, 0, 0, 0};
  for (uint64_t k : {5ull, 6ull, 0x100000000ull})
    for (int i = 0; i < 8; ++i) b.push_back(static_cast<unsigned char>(k >> (8 * i)));
  write_bytes("wide.sosd", b);
  const std::string path = write_yaml("wide.yaml", "seed: 1\ninitial:\n  file: wide.sosd\n");
  CHECK(parse_workload_spec(path).initial.count == 3);  // probing reads the header only
  std::string msg;
  try {
    std::unique_ptr<StepSource> src = open_workload(path);
    Step s;
    while (src->next(s)) {
    }
  } catch (const InputError& e) {
    msg = e.what();
  }
  CHECK(msg.rfind(path + ":3:9: initial.file: ", 0) == 0);
  CHECK(msg.find("key 4294967296 at index 2 is out of range") != std::string::npos);
  // The same file in a u64 workload is fine.
  const std::string ok = write_yaml("wide64.yaml", "key_type: u64\ninitial:\n  file: wide.sosd\n");
  std::unique_ptr<StepSource> src = open_workload(ok);
  Step s;
  REQUIRE(src->next(s));
  CHECK(s.initial.keys == std::vector<uint64_t>{5, 6, 0x100000000ull});
}

TEST_CASE("workload: the rmat distribution draws graph edges as 64-bit keys") {
  const WorkloadSpec s = parse_workload_spec(write_yaml(
      "rmat.yaml",
      "key_type: u64\ninitial: {count: 100, keys: {distribution: rmat, scale: 10, a: 0.45, b: 0.15, c: 0.15, "
      "scramble: false}}\nsteps:\n  - phase: {batches: 1, batch_size: 4, mix: {insert: 1.0}, keys: rmat}\n"));
  CHECK(s.initial.keys.kind == DistKind::Rmat);
  CHECK(s.initial.keys.scale == 10);
  CHECK(s.initial.keys.a == doctest::Approx(0.45));
  CHECK(s.initial.keys.c == doctest::Approx(0.15));
  CHECK_FALSE(s.initial.keys.scramble);
  CHECK(s.steps[0].phase.keys.kind == DistKind::Rmat);
  CHECK(s.steps[0].phase.keys.scale == 20);  // Graph500's defaults
  CHECK(s.steps[0].phase.keys.a == doctest::Approx(0.57));
  // Edges need 64-bit keys; quadrant probabilities sum to at most 1; the
  // key range is the edge space, not min and max.
  check_error("initial: {count: 5, keys: rmat}\n", 1, "rmat", "initial.keys", "64-bit keys u * 2^32 + v");
  check_error("key_type: u64\ninitial: {count: 5, keys: {distribution: rmat, a: 0.5, b: 0.3, c: 0.3}}\n", 2,
              "{distribution", "initial.keys", "above 1");
  check_error("key_type: u64\ninitial: {count: 5, keys: {distribution: rmat, scale: 33}}\n", 2, "33",
              "initial.keys.scale", "outside 1..32");
  CHECK(parse_error("key_type: u64\ninitial: {count: 5, keys: {distribution: rmat, max: 9}}\n").find("max") !=
        std::string::npos);
}
