// Binary formats: raw and SOSD key files, key files as workloads, operation
// traces, `gen` (workloads/keyfile.hpp, trace.hpp).
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

#include "core/common/errors.hpp"
#include "workloads/keyfile.hpp"
#include "workloads/rng.hpp"
#include "workloads/trace.hpp"
#include "scratch_dir.hpp"
#include "workloads/workload.hpp"

using namespace gpudict;
namespace fs = std::filesystem;

namespace {

fs::path fmt_tmp_dir() { return gpudict::testing::scratch_dir(); }

std::string fmt_path(const std::string& name) { return (fmt_tmp_dir() / name).string(); }

std::vector<unsigned char> fmt_read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<unsigned char>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void fmt_write_all(const std::string& path, const std::vector<unsigned char>& bytes) {
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

std::vector<Step> fmt_steps(StepSource& src) {
  std::vector<Step> out;
  Step s;
  while (src.next(s)) out.push_back(s);
  return out;
}

bool fmt_same(const std::vector<Step>& a, const std::vector<Step>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    const Step &x = a[i], &y = b[i];
    if (x.kind != y.kind || x.name != y.name || x.initial.keys != y.initial.keys ||
        x.initial.values != y.initial.values || x.batch.mode != y.batch.mode || x.batch.snapshot != y.batch.snapshot ||
        x.batch.types != y.batch.types || x.batch.keys != y.batch.keys || x.batch.args != y.batch.args)
      return false;
  }
  return true;
}

std::string fmt_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

std::vector<uint64_t> fmt_keys(size_t n, uint64_t mask, uint64_t seed) {
  std::vector<uint64_t> k(n);
  Rng r(seed);
  for (uint64_t& x : k) x = r.next() & mask;
  return k;
}

}  // namespace

TEST_CASE("formats: raw and SOSD key files round trip") {
  for (unsigned w : {4u, 8u}) {
    const uint64_t mask = w == 4 ? 0xFFFFFFFFull : ~0ull;
    std::vector<uint64_t> keys = fmt_keys(1000, mask, w);
    keys[0] = 0;
    keys[1] = mask;
    const std::string raw = fmt_path("rt_raw_" + std::to_string(w) + ".bin");
    write_raw_file(raw, keys, w);
    CHECK(fs::file_size(raw) == 1000 * w);
    KeyFileInfo info = probe_key_file(raw, KeyFileFormat::Raw, w, w);
    CHECK(info.format == KeyFileFormat::Raw);
    CHECK(info.count == 1000);
    CHECK(read_key_file(info, 1000, ~0ull) == keys);
    CHECK(read_key_file(info, 10, ~0ull) == std::vector<uint64_t>(keys.begin(), keys.begin() + 10));
    CHECK(read_raw_values(raw, w, 1000) == keys);

    const std::string sosd = fmt_path("rt_sosd_" + std::to_string(w) + ".bin");
    write_sosd_file(sosd, keys, w);
    CHECK(fs::file_size(sosd) == 8 + 1000 * w);
    info = probe_key_file(sosd, KeyFileFormat::Auto, 0, 4);
    CHECK(info.format == KeyFileFormat::Sosd);
    CHECK(info.width == w);
    CHECK(info.count == 1000);
    CHECK(info.offset == 8);
    CHECK(read_key_file(info, 1000, ~0ull) == keys);
  }
  // Little-endian on disk.
  const std::string le = fmt_path("le.bin");
  write_raw_file(le, {0x0102030405060708ull}, 8);
  CHECK(fmt_read_all(le) == std::vector<unsigned char>{8, 7, 6, 5, 4, 3, 2, 1});
  write_raw_file(le, {0x01020304ull}, 4);
  CHECK(fmt_read_all(le) == std::vector<unsigned char>{4, 3, 2, 1});
}

TEST_CASE("formats: key file auto-detection") {
  // SOSD u64: 8 + 8h == size.
  const std::string s64 = fmt_path("a.bin");
  write_sosd_file(s64, {1, 2, 3}, 8);
  KeyFileInfo i = probe_key_file(s64, KeyFileFormat::Auto, 0, 4);
  CHECK(i.format == KeyFileFormat::Sosd);
  CHECK(i.width == 8);
  CHECK(i.count == 3);
  // SOSD u32: 8 + 4h == size.
  const std::string s32 = fmt_path("b.bin");
  write_sosd_file(s32, {1, 2, 3}, 4);
  i = probe_key_file(s32, KeyFileFormat::Auto, 0, 8);
  CHECK(i.format == KeyFileFormat::Sosd);
  CHECK(i.width == 4);
  CHECK(i.count == 3);
  // Raw: the first u64 does not describe the size.
  const std::string raw = fmt_path("c.bin");
  write_raw_file(raw, {7, 0, 9, 10}, 4);
  i = probe_key_file(raw, KeyFileFormat::Auto, 0, 4);
  CHECK(i.format == KeyFileFormat::Raw);
  CHECK(i.width == 4);
  CHECK(i.count == 4);
  CHECK(read_key_file(i, 4, ~0ull) == std::vector<uint64_t>{7, 0, 9, 10});
  i = probe_key_file(raw, KeyFileFormat::Auto, 0, 8);
  CHECK(i.width == 8);
  CHECK(i.count == 2);
  // Forced raw on a SOSD file reads the header as a key.
  i = probe_key_file(s64, KeyFileFormat::Raw, 0, 8);
  CHECK(i.format == KeyFileFormat::Raw);
  CHECK(i.count == 4);
  // A forced width only recognises a SOSD header of that width.
  i = probe_key_file(s64, KeyFileFormat::Auto, 4, 4);
  CHECK(i.format == KeyFileFormat::Raw);
  CHECK(i.count == 8);
  // Raw size not a multiple of the width.
  const std::string odd = fmt_path("odd.bin");
  fmt_write_all(odd, {1, 2, 3, 4, 5, 6});
  std::string msg = fmt_error([&] { probe_key_file(odd, KeyFileFormat::Auto, 0, 4); });
  CHECK(msg.find(odd + ": size 6 bytes is not a multiple of the key width 4") == 0);
  // Both SOSD widths match only for an empty SOSD file (8 bytes, header 0): the name decides.
  const std::string e32 = fmt_path("empty_uint32.sosd"), e64 = fmt_path("empty_uint64.sosd"), e = fmt_path("empty.sosd");
  for (const std::string& p : {e32, e64, e}) write_sosd_file(p, {}, 8);
  CHECK(probe_key_file(e32, KeyFileFormat::Auto, 0, 8).width == 4);
  CHECK(probe_key_file(e64, KeyFileFormat::Auto, 0, 4).width == 8);
  CHECK(probe_key_file(e, KeyFileFormat::Auto, 0, 4).width == 4);  // else the default width
  CHECK(probe_key_file(e, KeyFileFormat::Auto, 0, 4).count == 0);
  CHECK(width_from_name("/x/uint64/books_200M_uint32") == 4);
  CHECK(width_from_name("fb_200M_uint64") == 8);
  CHECK(width_from_name("keys.bin") == 0);
  // Forced SOSD: a header that does not match is a truncated SOSD file.
  const std::string cut = fmt_path("cut.sosd");
  std::vector<unsigned char> bytes = fmt_read_all(s64);
  bytes.resize(bytes.size() - 8);
  fmt_write_all(cut, bytes);
  msg = fmt_error([&] { probe_key_file(cut, KeyFileFormat::Sosd, 0, 8); });
  CHECK(msg.find("truncated SOSD file: header says 3 keys, file holds 2 u64 keys or 4 u32 keys") != std::string::npos);
  // Auto on the same file: not SOSD, so raw (24 bytes: 3 u64 or 6 u32 keys).
  CHECK(probe_key_file(cut, KeyFileFormat::Auto, 0, 4).format == KeyFileFormat::Raw);
  fmt_write_all(cut, {1, 0, 0});
  msg = fmt_error([&] { probe_key_file(cut, KeyFileFormat::Sosd, 0, 8); });
  CHECK(msg.find("truncated SOSD file: 3 bytes, shorter than the 8-byte header") != std::string::npos);
  // Missing file.
  msg = fmt_error([&] { probe_key_file(fmt_path("missing.bin"), KeyFileFormat::Auto, 0, 4); });
  CHECK(msg.find("missing.bin: no such file") != std::string::npos);
  // Keys out of range for the key type.
  const std::string big = fmt_path("big.bin");
  write_raw_file(big, {1, 2, 0x100000000ull}, 8);
  msg = fmt_error([&] { read_key_file(probe_key_file(big, KeyFileFormat::Raw, 8, 8), 3, 0xFFFFFFFFull); });
  CHECK(msg.find("key 4294967296 at index 2 is out of range") != std::string::npos);
}

TEST_CASE("formats: a key file given as the workload") {
  const uint64_t n = kLookupAllBatch + 5;
  const std::vector<uint64_t> keys = fmt_keys(n, 0xFFFFFFFFull, 3);
  const std::string path = fmt_path("workload_keys.bin");
  write_raw_file(path, keys, 4);
  std::unique_ptr<StepSource> src = open_workload(path);
  CHECK(src->header().format == "keys-raw");
  CHECK(src->header().name == "workload_keys");
  CHECK(src->header().key_type == KeyType::U32);
  CHECK(src->header().seed == 1);
  const std::vector<Step> s = fmt_steps(*src);
  REQUIRE(s.size() == 4);
  CHECK(s[0].kind == StepKind::Initial);
  CHECK(s[0].initial.keys == keys);
  for (size_t i = 0; i < 100; ++i) CHECK(s[0].initial.values[i] == (splitmix64(keys[i] ^ 1) & 0xFFFFFFFFull));
  CHECK(s[1].kind == StepKind::Phase);
  CHECK(s[1].name == "lookup-all");
  CHECK(s[2].batch.size() == kLookupAllBatch);
  CHECK(s[3].batch.size() == 5);
  CHECK(std::vector<uint64_t>(keys.begin(), keys.begin() + kLookupAllBatch) == s[2].batch.keys);
  CHECK(s[3].batch.keys == std::vector<uint64_t>(keys.end() - 5, keys.end()));
  for (OpType t : s[2].batch.types) REQUIRE(t == OpType::Lookup);

  const WorkloadSummary sum = summarize_workload(path);
  CHECK(sum.initial == n);
  REQUIRE(sum.phases.size() == 1);
  CHECK(sum.phases[0].batches == 2);
  CHECK(sum.phases[0].max_batch == kLookupAllBatch);
  CHECK(sum.ops[static_cast<int>(OpType::Lookup)] == n);
  CHECK(sum.bounds.max_resident == n);

  // A SOSD u64 file: u64 keys; the seed override changes the values.
  const std::string sosd = fmt_path("books_uint64");
  write_sosd_file(sosd, {5, 1ull << 40, 7}, 8);
  OpenOptions o;
  o.has_seed_override = true;
  o.seed_override = 9;
  std::unique_ptr<StepSource> s2 = open_workload(sosd, o);
  CHECK(s2->header().format == "keys-sosd");
  CHECK(s2->header().key_type == KeyType::U64);
  const std::vector<Step> t = fmt_steps(*s2);
  CHECK(t[0].initial.keys == std::vector<uint64_t>{5, 1ull << 40, 7});
  CHECK(t[0].initial.values[1] == splitmix64((1ull << 40) ^ 9));
  // The example data files load directly too.
  const fs::path data = fs::path(GPUDICT_SOURCE_DIR) / "examples" / "data";
  CHECK(summarize_workload((data / "keys_uint32.bin").string()).initial == 10000);
  std::unique_ptr<StepSource> ex = open_workload((data / "sosd_keys_uint64.bin").string());
  CHECK(ex->header().format == "keys-sosd");
  CHECK(summarize_workload((data / "sosd_keys_uint64.bin").string()).initial == 8000);
  // An empty key file is refused, raw or SOSD with a zero count, by open and
  // summary alike; the message names the file and the YAML way to allow it.
  const std::string empty = fmt_path("empty.keys"), empty_sosd = fmt_path("empty_uint64.sosd");
  fmt_write_all(empty, {});
  write_sosd_file(empty_sosd, {}, 8);
  const std::string how = " (at least one key; a YAML workload may start from an empty key file on purpose with "
                          "initial: {file: PATH, allow_empty: true})";
  CHECK(fmt_error([&] { open_workload(empty); }) == empty + ": empty key file: 0 bytes, no keys" + how);
  CHECK(fmt_error([&] { summarize_workload(empty); }) == empty + ": empty key file: 0 bytes, no keys" + how);
  CHECK(fmt_error([&] { open_workload(empty_sosd); }) == empty_sosd + ": empty key file: its SOSD header says 0 keys" + how);
  CHECK(fmt_error([&] { summarize_workload(empty_sosd); }) ==
        empty_sosd + ": empty key file: its SOSD header says 0 keys" + how);
  // The probe itself still reads them (a YAML workload may allow them).
  CHECK(probe_key_file(empty, KeyFileFormat::Auto, 0, 4).count == 0);
}

TEST_CASE("formats: trace round trip") {
  WorkloadHeader h;
  h.name = "roundtrip";
  h.key_type = KeyType::U64;
  h.value_type = KeyType::U32;
  h.seed = 0xDEADBEEF12345678ull;
  std::vector<Step> steps(7);
  steps[0].kind = StepKind::Initial;
  steps[0].initial.keys = {1, ~0ull, 1ull << 50};
  steps[0].initial.values = {0, 0xFFFFFFFF, 17};
  steps[1].kind = StepKind::Phase;
  steps[1].name = "p";
  steps[2].kind = StepKind::Snapshot;
  steps[2].name = "snap";
  steps[3].kind = StepKind::Batch;
  steps[3].batch.mode = ExecMode::Concurrent;
  steps[3].batch.snapshot = "snap";
  steps[3].batch.push(OpType::Insert, ~0ull, 0xFFFFFFFF);
  steps[3].batch.push(OpType::Delete, 0);
  steps[3].batch.push(OpType::Lookup, 5);
  steps[3].batch.push(OpType::Count, 9, 3);
  steps[3].batch.push(OpType::Range, 0, ~0ull);
  steps[3].batch.push(OpType::Successor, ~0ull);
  steps[4].kind = StepKind::Batch;  // an empty batch is representable
  steps[5].kind = StepKind::DropSnapshot;
  steps[5].name = "snap";
  steps[6].kind = StepKind::Phase;
  steps[6].name = "";
  const std::string path = fmt_path("rt.gdt");
  {
    TraceWriter w(path, h);
    for (const Step& s : steps) w.write(s);
    w.finish();
  }
  CHECK(is_trace_file(path));
  std::unique_ptr<StepSource> src = open_workload(path);
  CHECK(src->header().format == "trace");
  CHECK(src->header().name == "roundtrip");
  CHECK(src->header().key_type == KeyType::U64);
  CHECK(src->header().value_type == KeyType::U32);
  CHECK(src->header().seed == h.seed);
  CHECK(fmt_same(fmt_steps(*src), steps));

  // The exact header bytes.
  const std::vector<unsigned char> b = fmt_read_all(path);
  CHECK(std::string(b.begin(), b.begin() + 8) == "GPUDICT1");
  CHECK(b[8] == 8);
  CHECK(b[9] == 4);
  CHECK(b[10] == 0);
  CHECK(b[11] == 0);
  CHECK(load_le(b.data() + 12, 4) == 1);
  CHECK(load_le(b.data() + 16, 8) == h.seed);
  CHECK(load_le(b.data() + 24, 4) == 9);
  CHECK(std::string(b.begin() + 28, b.begin() + 37) == "roundtrip");
  CHECK(load_le(b.data() + 37, 4) == 1);  // INITIAL
  CHECK(load_le(b.data() + 41, 8) == 3);
  CHECK(load_le(b.data() + b.size() - 4, 4) == 0xFFFFFFFFull);  // END

  // Summary from the record headers.
  const WorkloadSummary sum = summarize_workload(path);
  CHECK(sum.initial == 3);
  REQUIRE(sum.phases.size() == 2);
  CHECK(sum.phases[0].name == "p");
  CHECK(sum.phases[0].batches == 2);
  CHECK(sum.phases[0].max_batch == 6);
  CHECK(sum.phases[0].mode == ExecMode::Concurrent);
  CHECK(sum.phases[0].snapshot == "snap");
  for (OpType t : kAllOpTypes) CHECK(sum.ops[static_cast<int>(t)] == (is_graph_op(t) ? 0 : 1));
  CHECK(sum.snapshot_steps == std::vector<std::string>{"snapshot snap", "drop_snapshot snap"});
  CHECK(sum.bounds.max_resident == 4);
  CHECK(sum.bounds.max_queries == 4);
  CHECK(sum.bounds.max_snapshots == 1);

  // A trace whose first record is not INITIAL starts with an empty Initial step.
  const std::string noinit = fmt_path("noinit.gdt");
  {
    TraceWriter w(noinit, h);
    w.write(steps[1]);
    w.finish();
  }
  std::unique_ptr<StepSource> n2 = open_workload(noinit);
  const std::vector<Step> got = fmt_steps(*n2);
  REQUIRE(got.size() == 2);
  CHECK(got[0].kind == StepKind::Initial);
  CHECK(got[0].initial.size() == 0);
  CHECK(got[1].name == "p");
}

TEST_CASE("formats: truncated and corrupt traces") {
  WorkloadHeader h;
  h.name = "t";
  const std::string path = fmt_path("full.gdt");
  {
    TraceWriter w(path, h);
    Step s;
    s.kind = StepKind::Initial;
    s.initial.keys = {1, 2};
    s.initial.values = {3, 4};
    w.write(s);
    s = Step();
    s.kind = StepKind::Phase;
    s.name = "ph";
    w.write(s);
    s.kind = StepKind::Batch;
    s.batch.push(OpType::Lookup, 1);
    s.batch.push(OpType::Insert, 2, 3);
    w.write(s);
    w.finish();
  }
  const std::vector<unsigned char> full = fmt_read_all(path);
  const std::string cut = fmt_path("cut.gdt");
  // Every proper prefix is truncated, for the reader and for the summary.
  for (size_t len = 8; len < full.size(); ++len) {
    fmt_write_all(cut, std::vector<unsigned char>(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(len)));
    INFO("prefix of " << len << " bytes");
    const std::string m1 = fmt_error([&] {
      TraceSource src(cut);
      Step s;
      while (src.next(s)) {
      }
    });
    CHECK(m1.find("truncated trace: " + cut + ": ") == 0);
    CHECK(m1.find(" at byte ") != std::string::npos);
    const std::string m2 = fmt_error([&] { summarize_trace(cut); });
    CHECK(m2.find("truncated trace: " + cut + ": ") == 0);
  }
  // Without END specifically.
  fmt_write_all(cut, std::vector<unsigned char>(full.begin(), full.end() - 4));
  CHECK(fmt_error([&] { summarize_workload(cut); }).find("missing END record at byte " + std::to_string(full.size() - 4)) !=
        std::string::npos);

  auto corrupt_at = [&](size_t offset, std::vector<unsigned char> bytes) {
    std::vector<unsigned char> b = full;
    for (size_t i = 0; i < bytes.size(); ++i) b[offset + i] = bytes[i];
    fmt_write_all(cut, b);
    return fmt_error([&] {
      std::unique_ptr<StepSource> src = open_workload(cut);
      Step s;
      while (src->next(s)) {
      }
    });
  };
  // Header: 8 magic + 4 + 4 version + 8 seed + 4 + 1 name ("t") = 29; INITIAL: tag 4 + n 8 + 2*4 + 2*4 = 28.
  const size_t initial_at = 29, phase_at = initial_at + 28, batch_at = phase_at + 4 + 4 + 2;
  CHECK(corrupt_at(8, {3}).find("corrupt trace: " + cut + ": key_bytes 3 at byte 8") == 0);
  CHECK(corrupt_at(12, {2}).find("version 2") != std::string::npos);
  CHECK(corrupt_at(phase_at, {9}).find("unknown record tag 0x00000009 at byte " + std::to_string(phase_at)) !=
        std::string::npos);
  CHECK(corrupt_at(batch_at + 4, {7}).find("BATCH mode 7") != std::string::npos);
  // The op count says far more than the file holds: refused before allocating.
  const std::string huge = corrupt_at(batch_at + 12, {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F});
  CHECK(huge.find("truncated trace") == 0);
  CHECK(huge.find("BATCH of 9223372036854775807 operations") != std::string::npos);
  CHECK(corrupt_at(initial_at + 4, {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}).find("truncated trace") == 0);
  CHECK(corrupt_at(batch_at + 20, {8}).find("operation type 8") != std::string::npos);
  // Non-zero argument of a lookup.
  CHECK(corrupt_at(batch_at + 20 + 2 + 8, {1}).find("lookup argument 1") != std::string::npos);
  // Trailing bytes after END.
  std::vector<unsigned char> more = full;
  more.push_back(0);
  fmt_write_all(cut, more);
  CHECK(fmt_error([&] { summarize_trace(cut); }).find("1 bytes after the END record") != std::string::npos);
  // Snapshot names must be live.
  const std::string snap = fmt_path("snap.gdt");
  {
    TraceWriter w(snap, h);
    Step s;
    s.kind = StepKind::DropSnapshot;
    s.name = "x";
    w.write(s);
    w.finish();
  }
  CHECK(fmt_error([&] { summarize_trace(snap); }).find("DROP_SNAPSHOT 'x' is not live") != std::string::npos);
}

TEST_CASE("formats: gen writes a trace that replays exactly the YAML's steps") {
  for (const char* example : {"quickstart.yaml", "adversarial.yaml", "snapshots.yaml", "from-keyfile.yaml"}) {
    INFO(example);
    const std::string yaml = (fs::path(GPUDICT_SOURCE_DIR) / "examples" / example).string();
    const std::string out = fmt_path(std::string("gen_") + example);
    fs::remove_all(out);
    OpenOptions o;
    o.has_seed_override = true;
    o.seed_override = 1234;
    generate_to_directory(yaml, o, out);
    std::unique_ptr<StepSource> from_yaml = open_workload(yaml, o);
    const std::vector<Step> want = fmt_steps(*from_yaml);
    std::unique_ptr<StepSource> from_trace = open_workload(out + "/trace.gdt");
    CHECK(from_trace->header().name == from_yaml->header().name);
    CHECK(from_trace->header().seed == 1234);
    CHECK(from_trace->header().key_type == from_yaml->header().key_type);
    CHECK(fmt_same(fmt_steps(*from_trace), want));
    // The initial contents, raw.
    KeyFileInfo ki = probe_key_file(out + "/initial_keys.bin", KeyFileFormat::Raw, 4, 4);
    CHECK(read_key_file(ki, ki.count, ~0ull) == want[0].initial.keys);
    CHECK(read_raw_values(out + "/initial_values.bin", 4, want[0].initial.size()) == want[0].initial.values);
    CHECK(fs::file_size(out + "/initial_values.bin") == 4 * want[0].initial.size());
    // The trace's summary is the YAML's.
    const WorkloadSummary a = summarize_workload(yaml, o), b = summarize_workload(out + "/trace.gdt");
    CHECK(a.initial == b.initial);
    CHECK(a.ops == b.ops);
    CHECK(a.batches == b.batches);
    CHECK(a.snapshot_steps == b.snapshot_steps);
    CHECK(a.bounds.max_resident == b.bounds.max_resident);
    CHECK(a.bounds.max_batch == b.bounds.max_batch);
    CHECK(a.bounds.max_queries == b.bounds.max_queries);
    CHECK(a.bounds.max_snapshots == b.bounds.max_snapshots);
    REQUIRE(a.phases.size() == b.phases.size());
    for (size_t i = 0; i < a.phases.size(); ++i) {
      CHECK(a.phases[i].name == b.phases[i].name);
      CHECK(a.phases[i].ops == b.phases[i].ops);
      CHECK(a.phases[i].mode == b.phases[i].mode);
      CHECK(a.phases[i].snapshot == b.phases[i].snapshot);
    }
  }
  // An output directory that cannot be created.
  const std::string file = fmt_path("plain_file");
  fmt_write_all(file, {1});
  CHECK_THROWS_AS(generate_to_directory((fs::path(GPUDICT_SOURCE_DIR) / "examples" / "quickstart.yaml").string(), {},
                                        file + "/sub"),
                  InputError);
}
