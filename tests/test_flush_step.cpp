// The `flush` workload step: a synonym of `cleanup` (the slab hash's name for
// it), parsed to the same StepKind, written as the same trace record, and
// suggested for misspellings.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "cli_helpers.hpp"
#include "core/common/errors.hpp"
#include "scratch_dir.hpp"
#include "workloads/trace.hpp"
#include "workloads/workload.hpp"

using namespace gpudict;
using namespace gpudict::testing;

namespace {

std::vector<StepKind> kinds_of(StepSource& src) {
  std::vector<StepKind> v;
  Step s;
  while (src.next(s)) v.push_back(s.kind);
  return v;
}

// The InputError message of opening `yaml`, or "" when it opens.
std::string open_error(const std::string& yaml) {
  try {
    open_workload(yaml);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("workload: flush is the cleanup step under another name") {
  const std::string yaml = write_scratch_file("flush.yaml", R"(
initial: {count: 50}
steps:
  - flush
  - phase: {batches: 1, batch_size: 10, mix: {insert: 1.0}}
  - cleanup
  - flush:
)");
  const std::vector<StepKind> expected = {StepKind::Initial, StepKind::Cleanup, StepKind::Phase,
                                          StepKind::Batch,   StepKind::Cleanup, StepKind::Cleanup};
  auto src = open_workload(yaml);
  CHECK(kinds_of(*src) == expected);
  CHECK(summarize_workload(yaml).cleanups == 3);

  const std::string dir = (scratch_dir() / "flush-gen").string();
  generate_to_directory(yaml, OpenOptions{}, dir);
  auto trace = open_workload(dir + "/trace.gdt");
  CHECK(kinds_of(*trace) == expected);  // the same CLEANUP record
}

TEST_CASE("workload: flush takes no parameters, and misspelt steps get a suggestion") {
  const std::string params = open_error(write_scratch_file("flush-params.yaml", "steps:\n  - flush: {x: 1}\n"));
  CHECK(params.find(":2:") != std::string::npos);
  CHECK(params.find("flush takes no parameters") != std::string::npos);

  const std::string typo = open_error(write_scratch_file("flush-typo.yaml", "steps:\n  - flsh\n"));
  CHECK(typo.find("unknown step 'flsh', did you mean 'flush'?") != std::string::npos);
  CHECK(typo.find("or the word cleanup (or flush)") != std::string::npos);

  const std::string typo2 = open_error(write_scratch_file("cleanup-typo.yaml", "steps:\n  - cleanpu\n"));
  CHECK(typo2.find("did you mean 'cleanup'?") != std::string::npos);

  const std::string map_typo = open_error(write_scratch_file("flush-map-typo.yaml", "steps:\n  - flusj: {}\n"));
  CHECK(map_typo.find("did you mean 'flush'?") != std::string::npos);
  CHECK(map_typo.find("cleanup, flush") != std::string::npos);  // listed among the step kinds
}

TEST_CASE("cli: a workload with flush runs on the CPU backend and reports a cleanup step") {
  const std::string yaml = write_scratch_file("flush-cli.yaml", R"(
initial: {count: 100}
steps:
  - phase: {batches: 2, batch_size: 50, mix: {insert: 0.5, delete: 0.25, lookup: 0.25}}
  - flush
  - phase: {batches: 1, batch_size: 50, mix: {lookup: 1.0}}
)");
  auto r = run_gpudict("sorted-array '" + yaml + "' --backend cpu --format csv");
  CHECK_MESSAGE(r.exit_code == 0, r.err);
  CHECK(r.out.find(",cleanup,") != std::string::npos);
}
