// The `cleanup` workload step: parsed from YAML, carried through traces,
// counted by the summary, and replayed as its own report step.
#include <doctest/doctest.h>

#include "core/common/errors.hpp"
#include "scratch_dir.hpp"
#include "workloads/cpu_backend.hpp"
#include "workloads/replay.hpp"
#include "workloads/trace.hpp"
#include "workloads/workload.hpp"

using namespace gpudict;
using gpudict::testing::scratch_dir;
using gpudict::testing::write_scratch_file;

namespace {
const char* kYaml = R"(
seed: 5
initial: {count: 100}
steps:
  - phase: {name: a, batches: 2, batch_size: 50, mix: {insert: 0.5, delete: 0.5}}
  - cleanup
  - phase: {name: b, batches: 1, batch_size: 50, mix: {lookup: 1.0}}
  - cleanup
)";

std::vector<StepKind> kinds_of(StepSource& src) {
  std::vector<StepKind> v;
  Step s;
  while (src.next(s)) v.push_back(s.kind);
  return v;
}
}  // namespace

TEST_CASE("workload: cleanup steps parse, summarise and survive a trace") {
  const std::string yaml = write_scratch_file("cleanup.yaml", kYaml);
  auto src = open_workload(yaml);
  const std::vector<StepKind> expected = {StepKind::Initial, StepKind::Phase,   StepKind::Batch, StepKind::Batch,
                                          StepKind::Cleanup, StepKind::Phase,   StepKind::Batch, StepKind::Cleanup};
  CHECK(kinds_of(*src) == expected);
  CHECK(summarize_workload(yaml).cleanups == 2);

  const std::string dir = (scratch_dir() / "cleanup-gen").string();
  generate_to_directory(yaml, OpenOptions{}, dir);
  auto trace = open_workload(dir + "/trace.gdt");
  CHECK(kinds_of(*trace) == expected);
  CHECK(summarize_workload(dir + "/trace.gdt").cleanups == 2);
}

TEST_CASE("workload: a misspelt cleanup step is rejected with its line") {
  const std::string yaml = write_scratch_file("cleanup-bad.yaml", "steps:\n  - cleanpu\n");
  try {
    open_workload(yaml);
    FAIL("expected InputError");
  } catch (const InputError& e) {
    const std::string m = e.what();
    CHECK(m.find(yaml + ":2:") != std::string::npos);
    CHECK(m.find("cleanup") != std::string::npos);
  }
}

TEST_CASE("replay: a cleanup step is reported with the figures around it") {
  const std::string yaml = write_scratch_file("cleanup-run.yaml", kYaml);
  Capabilities caps;
  caps.ordered = true;
  ReplayOptions opt;
  opt.gpu = false;
  RunReport rep = replay([&] { return open_workload(yaml); },
                         [&] { return make_cpu_dictionary(caps, KeyType::U32, KeyType::U32); },
                         summarize_workload(yaml), opt);
  CHECK(rep.mismatches == 0);
  int cleanups = 0;
  for (const auto& s : rep.steps) {
    if (s.kind != "cleanup") continue;
    ++cleanups;
    REQUIRE(s.rows.size() == 1);
    CHECK(s.rows[0].phase == Phase::Cleanup);
    CHECK(!s.after.empty());
  }
  CHECK(cleanups == 2);
}
