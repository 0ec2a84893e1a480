// The defaults --help shows are the structures' own: each OptionSpec's
// default text, parsed as the command line would, gives the typed options
// struct's default-constructed value, field by field. A field added to an
// options struct changes its size and stops this file from compiling until
// the comparison below (and so the option's spec) covers it.
#include <doctest/doctest.h>

#include <string>

#include "workloads/registry/registry.hpp"
#include "workloads/registry/structures.hpp"

using namespace gpudict;

namespace {

// The config the command line builds when no structure option is given.
StructureConfig defaults_of(const char* structure) {
  const StructureInfo* info = find_structure(structure);
  REQUIRE(info != nullptr);
  StructureConfig c;
  for (const auto& o : info->options) c.options[o.name] = o.default_value;
  return c;
}

}  // namespace

TEST_CASE("option defaults: btree's and mvbtree's --help defaults are btree::Options{}") {
  static_assert(sizeof(btree::Options) == 40, "a btree::Options field was added: compare it here");
  const btree::Options d;
  for (const char* s : {"btree", "mvbtree"}) {
    CAPTURE(s);
    const btree::Options o = btree::parse_options(defaults_of(s));
    CHECK(o.node_pool == d.node_pool);
    CHECK(o.fill == d.fill);
    CHECK(o.tile == d.tile);
    CHECK(o.sort == d.sort);
    CHECK(o.query_tile == d.query_tile);
    CHECK(o.phased_updates == d.phased_updates);
    CHECK(o.thread_ops == d.thread_ops);
    CHECK(o.op_words == d.op_words);
    CHECK(o.leaf_groups == d.leaf_groups);
    CHECK(o.leaf_directory == d.leaf_directory);
  }
}

TEST_CASE("option defaults: slabhash's --help defaults are slabhash::Options{}") {
  static_assert(sizeof(slabhash::Options) == 80, "a slabhash::Options field was added: compare it here");
  const slabhash::Options d, o = slabhash::parse_options(defaults_of("slabhash"));
  CHECK(o.mode == d.mode);
  CHECK(o.buckets == d.buckets);
  CHECK(o.load_factor == d.load_factor);
  CHECK(o.expected_keys == d.expected_keys);
  CHECK(o.pool_slabs == d.pool_slabs);
  CHECK(o.growth == d.growth);
  CHECK(o.grow_ahead == d.grow_ahead);
  CHECK(o.max_pool_bytes == d.max_pool_bytes);
  CHECK(o.flush_every == d.flush_every);
  CHECK(o.flush_tombstones == d.flush_tombstones);
  CHECK(o.prefetch == d.prefetch);
}

TEST_CASE("option defaults: lsm's --help defaults are lsm::Options{}") {
  static_assert(sizeof(lsm::Options) == 32, "an lsm::Options field was added: compare it here");
  const lsm::Options d, o = lsm::parse_options(defaults_of("lsm"));
  CHECK(o.batch_size == d.batch_size);
  CHECK(o.cleanup_every == d.cleanup_every);
  CHECK(o.stale_fraction == d.stale_fraction);
  CHECK(o.lookup_filter == d.lookup_filter);
  CHECK(o.exact_stale == d.exact_stale);
}

TEST_CASE("option defaults: graph's --help defaults are graph::Options{}") {
  static_assert(sizeof(graph::Options) == 64, "a graph::Options field was added: compare it here");
  const graph::Options d, o = graph::parse_options(defaults_of("graph"));
  CHECK(o.variant == d.variant);
  CHECK(o.load_factor == d.load_factor);
  CHECK(o.vertex_capacity == d.vertex_capacity);
  CHECK(o.max_vertices == d.max_vertices);
  CHECK(o.pool_slabs == d.pool_slabs);
  CHECK(o.growth == d.growth);
  CHECK(o.max_pool_bytes == d.max_pool_bytes);
  CHECK(o.flush_tombstones == d.flush_tombstones);
}

TEST_CASE("option defaults: every --help default is accepted by the option's own check") {
  // Parsing with only the defaults never throws, and gives the structure's
  // defaults (above); here every structure with options, so a new one is
  // not forgotten.
  for (const auto& s : structures()) {
    CAPTURE(s.name);
    StructureConfig c;
    for (const auto& o : s.options) c.options[o.name] = o.default_value;
    if (s.validate_options) CHECK_NOTHROW(s.validate_options(c));
    if (s.make_gpu) CHECK_NOTHROW((void)s.caps_with(c));
  }
}
