// Graph files as workloads (workloads/graph_file.hpp): Matrix Market and
// edge lists read into edge keys u * 2^32 + v, their errors with line
// numbers, and a graph file run verified on the CPU reference.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "core/common/errors.hpp"
#include "workloads/graph_file.hpp"
#include "workloads/workload.hpp"

using namespace gpudict;
namespace fs = std::filesystem;

namespace {

std::string write_graph(const std::string& name, const std::string& text) {
  const fs::path dir = fs::temp_directory_path() / ("gpudict_graph_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path p = dir / name;
  std::ofstream(p) << text;
  return p.string();
}

uint64_t edge(uint64_t u, uint64_t v) { return (u << 32) | v; }

std::string read_error(const std::string& name, const std::string& text) {
  try {
    read_graph_file(write_graph(name, text));
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("graph files: Matrix Market coordinate, general and symmetric, pattern, integer and real") {
  const GraphEdges g = read_graph_file(write_graph(
      "g.mtx", "%%MatrixMarket matrix coordinate pattern general\n% a comment\n%\n3 4 3\n1 2\n3 4\n2 2\n"));
  CHECK(g.format == "mtx");
  CHECK(g.vertices == 4);
  CHECK_FALSE(g.symmetric);
  CHECK(g.keys == std::vector<uint64_t>{edge(0, 1), edge(2, 3), edge(1, 1)});
  CHECK(g.values == std::vector<uint64_t>{0, 0, 0});

  const GraphEdges s = read_graph_file(
      write_graph("s.mtx", "%%MatrixMarket matrix coordinate integer symmetric\n3 3 3\n2 1 7\n3 3 -1\n3 1 5\n"));
  CHECK(s.symmetric);
  // Off-diagonal entries both ways, the diagonal once; -1 as its two's complement.
  CHECK(s.keys == std::vector<uint64_t>{edge(1, 0), edge(0, 1), edge(2, 2), edge(2, 0), edge(0, 2)});
  CHECK(s.values == std::vector<uint64_t>{7, 7, ~0ull, 5, 5});

  const GraphEdges r =
      read_graph_file(write_graph("r.MTX", "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 2 0.5\n"));
  double w;
  std::memcpy(&w, &r.values[0], sizeof w);
  CHECK(w == 0.5);
}

TEST_CASE("graph files: edge lists, 0-based, comments, weights") {
  const GraphEdges g = read_graph_file(write_graph("g.el", "# comment\n0 1\n\n5 4294967295\n% another\n"));
  CHECK(g.format == "edge-list");
  CHECK(g.keys == std::vector<uint64_t>{edge(0, 1), edge(5, 0xFFFFFFFFull)});
  CHECK(g.vertices == 0x100000000ull);
  const GraphEdges w = read_graph_file(write_graph("w.edges", "0 1 2.5\n1 2 3\n"));
  double d;
  std::memcpy(&d, &w.values[1], sizeof d);
  CHECK(d == 3.0);  // the first edge's weight made them reals
}

TEST_CASE("graph files: malformed files are refused with their line") {
  CHECK(read_error("a.mtx", "%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n").find("a.mtx:1: format 'array'") !=
        std::string::npos);
  CHECK(read_error("b.mtx", "%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 0\n")
            .find("field 'complex'") != std::string::npos);
  CHECK(read_error("c.mtx", "%%MatrixMarket matrix coordinate pattern general\n2 2 2\n1 3\n").find("c.mtx:3: entry (1, 3) outside") !=
        std::string::npos);
  CHECK(read_error("d.mtx", "%%MatrixMarket matrix coordinate pattern general\n2 2 3\n1 2\n").find("ends after 1 of 3") !=
        std::string::npos);
  CHECK(read_error("e.mtx", "hello\n").find("not a Matrix Market banner") != std::string::npos);
  CHECK(read_error("f.el", "0 1\n0 1 2\n").find("f.el:2: edge '0 1 2'") != std::string::npos);
  CHECK(read_error("g.el", "0 4294967296\n").find("above 2^32 - 1") != std::string::npos);
  CHECK(read_error("h.el", "# nothing\n").find("no edges") != std::string::npos);
}

TEST_CASE("graph files: as the workload, every edge built then looked up") {
  const std::string path = write_graph(
      "w.mtx", "%%MatrixMarket matrix coordinate integer symmetric\n4 4 4\n2 1 10\n3 2 20\n4 1 30\n4 4 40\n");
  const WorkloadSummary sum = summarize_workload(path);
  CHECK(sum.initial == 7);
  REQUIRE(sum.phases.size() == 1);
  CHECK(sum.phases[0].name == "edge-exists");
  auto src = open_workload(path);
  CHECK(src->header().format == "graph-mtx");
  CHECK(src->header().key_type == KeyType::U64);
  Step step;
  REQUIRE(src->next(step));
  CHECK(step.kind == StepKind::Initial);
  CHECK(step.initial.keys.size() == 7);
  REQUIRE(src->next(step));
  CHECK(step.kind == StepKind::Phase);
  REQUIRE(src->next(step));
  CHECK(step.kind == StepKind::Batch);
  CHECK(step.batch.keys.size() == 7);
  CHECK_FALSE(src->next(step));
}

namespace {

// A binary COO file: the header, then (src, dst[, weight]) records.
std::string coo_bytes(const std::vector<std::pair<uint32_t, uint32_t>>& edges, const std::vector<uint64_t>* weights,
                      uint64_t claimed_edges, uint32_t flags_extra = 0) {
  std::string b("GPUDCOO1", 8);
  auto put32 = [&](uint32_t x) {
    for (int i = 0; i < 4; ++i) b.push_back(static_cast<char>((x >> (8 * i)) & 0xFF));
  };
  auto put64 = [&](uint64_t x) {
    put32(static_cast<uint32_t>(x));
    put32(static_cast<uint32_t>(x >> 32));
  };
  put32((weights ? 1u : 0u) | flags_extra);
  put32(0);
  put64(claimed_edges);
  for (size_t i = 0; i < edges.size(); ++i) {
    put32(edges[i].first);
    put32(edges[i].second);
    if (weights) put64((*weights)[i]);
  }
  return b;
}

}  // namespace

TEST_CASE("graph files: binary COO, with and without weights, the ends of the id range; malformed headers refused") {
  const std::vector<std::pair<uint32_t, uint32_t>> edges = {{0, 1}, {1, 0}, {0xFFFFFFFFu, 0}, {7, 0xFFFFFFFFu}, {7, 7}};
  {
    const GraphEdges g = read_graph_file(write_graph("p.coo", coo_bytes(edges, nullptr, edges.size())));
    CHECK(g.format == "coo");
    REQUIRE(g.keys.size() == 5);
    CHECK(g.keys[2] == edge(0xFFFFFFFFull, 0));
    CHECK(g.keys[3] == edge(7, 0xFFFFFFFFull));
    CHECK(g.values == std::vector<uint64_t>(5, 0));
    CHECK(g.vertices == (1ull << 32));
  }
  {
    const std::vector<uint64_t> w = {1, 2, ~0ull, 1ull << 40, 0};
    const GraphEdges g = read_graph_file(write_graph("w.coo", coo_bytes(edges, &w, edges.size())));
    CHECK(g.keys[0] == edge(0, 1));
    CHECK(g.values == w);
  }
  CHECK(read_error("short.coo", coo_bytes(edges, nullptr, 6)).find("the header says 6 edges of 8 bytes, the file has 40") !=
        std::string::npos);
  CHECK(read_error("long.coo", coo_bytes(edges, nullptr, 4)).find("the header says 4 edges") != std::string::npos);
  CHECK(read_error("flags.coo", coo_bytes(edges, nullptr, 5, 2)).find("flags 2") != std::string::npos);
  CHECK(read_error("magic.coo", "GPUDCOO2" + std::string(16, '\0')).find("not a binary COO file") != std::string::npos);
  CHECK(read_error("tiny.coo", "GPU").find("not a binary COO file") != std::string::npos);
  CHECK(read_error("empty.coo", coo_bytes({}, nullptr, 0)).find("no edges") != std::string::npos);
  // As the workload: built, then every edge looked up.
  const std::string path = write_graph("run.coo", coo_bytes(edges, nullptr, edges.size()));
  CHECK(is_graph_file(path));
  CHECK(open_workload(path)->header().format == "graph-coo");
  CHECK(summarize_workload(path).initial == 5);
}
