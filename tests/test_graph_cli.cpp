// The graph's command-line side and its CPU stand-in: options parsed into
// graph::Options (errors name the flag), the capabilities (vertex-block
// counts and ranges, u64 keys, u32 or u64 weights), the refusal of a range
// that is not a vertex block, and graph-rmat.yaml verified on the CPU
// backend (the GPU runs are in tests/gpu/test_graph.cu).
#include <doctest/doctest.h>

#include <string>

#include "cli_helpers.hpp"
#include "core/common/errors.hpp"
#include "scratch_dir.hpp"
#include "workloads/registry/registry.hpp"
#include "workloads/registry/structures.hpp"

using namespace gpudict;
using gpudict::testing::run_gpudict;

namespace {
StructureConfig graph_config(std::initializer_list<std::pair<const char*, const char*>> given) {
  const StructureInfo* info = find_structure("graph");
  REQUIRE(info != nullptr);
  StructureConfig c;
  for (const auto& o : info->options) c.options[o.name] = o.default_value;
  for (const auto& [k, v] : given) c.options[k] = v;
  return c;
}
}  // namespace

TEST_CASE("graph options: defaults, every flag, and out-of-range values named") {
  const graph::Options d = graph::parse_options(graph_config({}));
  CHECK(d.variant == graph::Variant::Map);
  CHECK(d.load_factor == doctest::Approx(0.7));
  CHECK(d.max_vertices == (1ull << 28));
  CHECK(d.vertex_capacity == 0);
  CHECK(d.growth);
  const graph::Options o = graph::parse_options(graph_config({{"variant", "set"},
                                                              {"load-factor", "2.5"},
                                                              {"vertex-capacity", "1024"},
                                                              {"max-vertices", "4096"},
                                                              {"pool-slabs", "65536"},
                                                              {"pool-growth", "off"},
                                                              {"max-pool-bytes", "1000000"},
                                                              {"flush-tombstones", "0"}}));
  CHECK(o.variant == graph::Variant::Set);
  CHECK(o.load_factor == doctest::Approx(2.5));
  CHECK(o.vertex_capacity == 1024);
  CHECK(o.max_vertices == 4096);
  CHECK(o.pool_slabs == 65536);
  CHECK(!o.growth);
  CHECK(o.max_pool_bytes == 1000000);
  CHECK(o.flush_tombstones == 0.0);
  auto refused = [](std::initializer_list<std::pair<const char*, const char*>> given, const std::string& flag) {
    try {
      (void)graph::parse_options(graph_config(given));
      FAIL("expected InputError for " << flag);
    } catch (const InputError& e) {
      CHECK_MESSAGE(std::string(e.what()).find(flag) != std::string::npos, e.what());
    }
  };
  refused({{"load-factor", "0"}}, "--load-factor");
  refused({{"load-factor", "65"}}, "--load-factor");
  refused({{"max-vertices", "0"}}, "--max-vertices");
  refused({{"max-vertices", "4294967296"}}, "--max-vertices");
  refused({{"max-vertices", "100"}, {"vertex-capacity", "101"}}, "--vertex-capacity");
  refused({{"variant", "multimap"}}, "variant");
  refused({{"flush-tombstones", "-1"}}, "--flush-tombstones");
}

TEST_CASE("graph capabilities: vertex-block counts and ranges, u64 edges, u32 or u64 weights") {
  const Capabilities c = graph_caps();
  CHECK(c.supports(OpType::Count));
  CHECK(c.supports(OpType::Range));
  CHECK(!c.supports(OpType::Successor));
  CHECK(c.vertex_count_range);
  CHECK(!c.ordered);
  CHECK(c.supports(KeyType::U64));
  CHECK(!c.supports(KeyType::U32));
  CHECK(c.supports_value(KeyType::U32));
  CHECK(c.supports_value(KeyType::U64));
  CHECK(graph_caps_of(graph::Variant::Set).semantics == Semantics::Set);
  CHECK(is_vertex_block(5ull << 32, (5ull << 32) | 0xFFFFFFFFull));
  CHECK(!is_vertex_block(5ull << 32, 5ull << 32));
  CHECK(!is_vertex_block((5ull << 32) + 1, (5ull << 32) | 0xFFFFFFFFull));
  CHECK(!is_vertex_block(5ull << 32, (6ull << 32) | 0xFFFFFFFFull));
}

TEST_CASE("graph on the CPU backend: graph-rmat verifies; a range that is not a vertex block exits 2") {
  for (const char* variant : {"map", "set"}) {
    auto r = run_gpudict(std::string("graph examples/graph-rmat.yaml --backend cpu --quiet --variant ") + variant);
    CHECK_MESSAGE(r.exit_code == 0, r.err);
  }
  const std::string path = testing::write_scratch_file("graph-not-a-block.yaml", R"(
key_type: u64
initial: {count: 1000, keys: {distribution: rmat, scale: 8}}
steps:
  - phase: {name: r, batches: 1, batch_size: 100, mix: {range: 1.0}, range_length: {distribution: fixed, length: 3}}
)");
  const auto check = run_gpudict("check examples/graph-rgg.yaml");
  CHECK(check.exit_code == 0);
  CHECK_MESSAGE(check.out.find("(u64 keys, u32 values, seed 11, undirected)") != std::string::npos, check.out);
  auto r = run_gpudict("graph " + path + " --backend cpu");
  CHECK(r.exit_code == 2);
  CHECK_MESSAGE(r.err.find("graph answers count and range over a whole vertex block only") != std::string::npos, r.err);
}
