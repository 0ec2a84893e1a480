// Graph files (graph_file.hpp): a small Matrix Market coordinate reader and
// an edge-list reader, line by line, every malformed line reported with its
// number; and gpudict's binary COO, read in chunks.
#include "workloads/graph_file.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/common/errors.hpp"
#include "workloads/keyfile.hpp"

namespace gpudict {

namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

[[noreturn]] void fail_at(const std::string& path, uint64_t line, const std::string& what, const std::string& expected) {
  throw InputError(path + ":" + std::to_string(line) + ": " + what + " (" + expected + ")");
}

// The words of a line (whitespace-separated).
std::vector<std::string> words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> w;
  for (std::string s; in >> s;) w.push_back(s);
  return w;
}

bool parse_u64(const std::string& s, uint64_t& v) {
  if (s.empty() || s[0] == '-' || s[0] == '+') return false;
  errno = 0;
  char* end = nullptr;
  const unsigned long long x = std::strtoull(s.c_str(), &end, 10);
  if (errno != 0 || *end != '\0') return false;
  v = x;
  return true;
}

// A weight's value bits: an integer field as its two's complement, a real
// one as its double's bits.
bool parse_weight(const std::string& s, bool real, uint64_t& bits) {
  errno = 0;
  char* end = nullptr;
  if (real) {
    const double d = std::strtod(s.c_str(), &end);
    if (errno != 0 || *end != '\0' || s.empty()) return false;
    std::memcpy(&bits, &d, sizeof bits);
    return true;
  }
  const long long x = std::strtoll(s.c_str(), &end, 10);
  if (errno != 0 || *end != '\0' || s.empty()) return false;
  bits = static_cast<uint64_t>(x);
  return true;
}

constexpr uint64_t kMaxVertex = 0xFFFFFFFFull;  // a vertex id is the key's upper or lower half

void read_mtx(const std::string& path, std::ifstream& in, GraphEdges& g) {
  std::string line;
  uint64_t no = 1;
  if (!std::getline(in, line)) fail_at(path, 1, "empty file", "a Matrix Market banner: %%MatrixMarket matrix coordinate ...");
  const auto banner = words(lower(line));
  if (banner.size() != 5 || banner[0] != "%%matrixmarket" || banner[1] != "matrix")
    fail_at(path, no, "not a Matrix Market banner: '" + line + "'",
            "%%MatrixMarket matrix coordinate FIELD SYMMETRY");
  if (banner[2] != "coordinate")
    fail_at(path, no, "format '" + banner[2] + "': a dense matrix is no edge list", "coordinate");
  const std::string& field = banner[3];
  if (field != "pattern" && field != "integer" && field != "real")
    fail_at(path, no, "field '" + field + "'", "pattern, integer or real");
  const std::string& symmetry = banner[4];
  if (symmetry != "general" && symmetry != "symmetric")
    fail_at(path, no, "symmetry '" + symmetry + "'", "general or symmetric");
  g.symmetric = symmetry == "symmetric";
  const bool weighted = field != "pattern", real = field == "real";
  uint64_t rows = 0, cols = 0, entries = 0;
  bool sized = false;
  uint64_t seen = 0;
  while (std::getline(in, line)) {
    ++no;
    const auto w = words(line);
    if (w.empty() || w[0][0] == '%') continue;
    if (!sized) {
      if (w.size() != 3 || !parse_u64(w[0], rows) || !parse_u64(w[1], cols) || !parse_u64(w[2], entries))
        fail_at(path, no, "size line '" + line + "'", "rows columns entries");
      if (rows > kMaxVertex || cols > kMaxVertex)
        fail_at(path, no, "a matrix of " + w[0] + " x " + w[1], "at most 2^32 - 1 rows and columns (vertex ids fit 32 bits)");
      g.vertices = std::max(rows, cols);
      g.keys.reserve(entries * (g.symmetric ? 2 : 1));
      g.values.reserve(entries * (g.symmetric ? 2 : 1));
      sized = true;
      continue;
    }
    uint64_t i = 0, j = 0, bits = 0;
    if (w.size() != (weighted ? 3u : 2u) || !parse_u64(w[0], i) || !parse_u64(w[1], j) ||
        (weighted && !parse_weight(w[2], real, bits)))
      fail_at(path, no, "entry '" + line + "'", weighted ? std::string("i j ") + (real ? "real" : "integer") : "i j");
    if (i < 1 || i > rows || j < 1 || j > cols)
      fail_at(path, no, "entry (" + w[0] + ", " + w[1] + ") outside the " + std::to_string(rows) + " x " +
                            std::to_string(cols) + " matrix",
              "1-based indices within the size line's");
    if (++seen > entries)
      fail_at(path, no, "more entries than the size line's " + std::to_string(entries), "exactly that many entries");
    const uint64_t u = i - 1, v = j - 1;
    g.keys.push_back((u << 32) | v);
    g.values.push_back(bits);
    if (g.symmetric && u != v) {
      g.keys.push_back((v << 32) | u);
      g.values.push_back(bits);
    }
  }
  if (!sized) fail_at(path, no, "no size line", "rows columns entries after the banner and comments");
  if (seen < entries)
    fail_at(path, no, "the file ends after " + std::to_string(seen) + " of " + std::to_string(entries) + " entries",
            "as many entries as the size line says");
}

void read_edge_list(const std::string& path, std::ifstream& in, GraphEdges& g) {
  std::string line;
  uint64_t no = 0;
  int columns = 0;     // 2 or 3, fixed by the first edge
  bool real = false;   // the weights' kind, fixed by the first edge's: real when it has '.', 'e' or 'E'
  while (std::getline(in, line)) {
    ++no;
    const auto w = words(line);
    if (w.empty() || w[0][0] == '#' || w[0][0] == '%') continue;
    if (columns == 0) {
      columns = static_cast<int>(w.size());
      real = columns == 3 && w[2].find_first_of(".eE") != std::string::npos;
    }
    uint64_t u = 0, v = 0, bits = 0;
    if ((columns != 2 && columns != 3) || static_cast<int>(w.size()) != columns || !parse_u64(w[0], u) ||
        !parse_u64(w[1], v) || (columns == 3 && !parse_weight(w[2], real, bits)))
      fail_at(path, no, "edge '" + line + "'",
              std::string("'u v' or 'u v w' on every line, as on the first") +
                  (columns == 3 ? (real ? " (real weights)" : " (integer weights)") : ""));
    if (u > kMaxVertex || v > kMaxVertex)
      fail_at(path, no, "vertex id above 2^32 - 1", "vertex ids that fit 32 bits");
    g.keys.push_back((u << 32) | v);
    g.values.push_back(bits);
    g.vertices = std::max(g.vertices, std::max(u, v) + 1);
  }
}

// Binary COO (.coo): the header (magic, flags, reserved, edge count), then
// one record per edge: u32 src, u32 dst, and with flag bit 0 a u64 weight;
// little-endian, nothing after the last record.
constexpr char kCooMagic[8] = {'G', 'P', 'U', 'D', 'C', 'O', 'O', '1'};
constexpr uint64_t kCooHeader = 24;

[[noreturn]] void fail_coo(const std::string& path, const std::string& what, const std::string& expected) {
  throw InputError(path + ": " + what + " (" + expected + ")");
}

void read_coo(const std::string& path, std::ifstream& in, GraphEdges& g) {
  unsigned char h[kCooHeader];
  in.read(reinterpret_cast<char*>(h), kCooHeader);
  if (in.gcount() != static_cast<std::streamsize>(kCooHeader) || std::memcmp(h, kCooMagic, 8) != 0)
    fail_coo(path, "not a binary COO file", "the 8-byte magic GPUDCOO1, docs/workload-format.md \"Graph files\"");
  const uint64_t flags = load_le(h + 8, 4), reserved = load_le(h + 12, 4);
  if ((flags & ~uint64_t{1}) != 0 || reserved != 0)
    fail_coo(path, "flags " + std::to_string(flags) + ", reserved " + std::to_string(reserved),
             "flags 0 or 1 (bit 0: a u64 weight per edge), reserved 0");
  const bool weighted = (flags & 1u) != 0;
  const uint64_t n = load_le(h + 16, 8);
  const uint64_t record = weighted ? 16 : 8;
  const uint64_t size = std::filesystem::file_size(path);
  if (n > (size - kCooHeader) / record || kCooHeader + n * record != size)
    fail_coo(path, "the header says " + std::to_string(n) + " edges of " + std::to_string(record) + " bytes, the file has " +
                       std::to_string(size - kCooHeader) + " bytes after the header",
             "exactly edges x record bytes after the 24-byte header");
  g.keys.resize(n);
  g.values.assign(n, 0);
  constexpr uint64_t kChunk = 1u << 20;  // edges read at a time
  std::vector<unsigned char> buf(kChunk * record);
  for (uint64_t at = 0; at < n; at += kChunk) {
    const uint64_t m = std::min(kChunk, n - at);
    in.read(reinterpret_cast<char*>(buf.data()), static_cast<std::streamsize>(m * record));
    if (in.gcount() != static_cast<std::streamsize>(m * record))
      fail_coo(path, "read error after " + std::to_string(at) + " edges", "a readable file");
    for (uint64_t i = 0; i < m; ++i) {
      const unsigned char* r = buf.data() + i * record;
      const uint64_t u = load_le(r, 4), v = load_le(r + 4, 4);
      g.keys[at + i] = (u << 32) | v;
      if (weighted) g.values[at + i] = load_le(r + 8, 8);
      g.vertices = std::max(g.vertices, std::max(u, v) + 1);
    }
  }
}

}  // namespace

bool is_graph_file(const std::string& path) {
  const std::string ext = lower(std::filesystem::path(path).extension().string());
  return ext == ".mtx" || ext == ".el" || ext == ".edges" || ext == ".coo";
}

GraphEdges read_graph_file(const std::string& path) {
  const std::string ext = lower(std::filesystem::path(path).extension().string());
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open (a Matrix Market, edge-list or binary COO graph file)");
  GraphEdges g;
  g.format = ext == ".mtx" ? "mtx" : ext == ".coo" ? "coo" : "edge-list";
  if (g.format == "mtx") read_mtx(path, in, g);
  else if (g.format == "coo") read_coo(path, in, g);
  else read_edge_list(path, in, g);
  if (g.keys.empty()) throw InputError(path + ": no edges (a graph with at least one edge)");
  return g;
}

namespace {

class GraphFileSource : public StepSource {
 public:
  explicit GraphFileSource(const std::string& path) : g_(read_graph_file(path)) {
    header_.name = std::filesystem::path(path).stem().string();
    header_.path = path;
    header_.format = "graph-" + g_.format;
    header_.key_type = KeyType::U64;
    header_.value_type = KeyType::U64;
    header_.seed = 1;
  }
  const WorkloadHeader& header() const override { return header_; }

  bool next(Step& step) override {
    step.clear();
    if (state_ == 0) {
      step.kind = StepKind::Initial;
      step.initial.keys = g_.keys;
      step.initial.values = g_.values;
      state_ = 1;
      return true;
    }
    if (state_ == 1) {
      step.kind = StepKind::Phase;
      step.name = "edge-exists";
      state_ = 2;
      return true;
    }
    if (pos_ >= g_.keys.size()) return false;
    step.kind = StepKind::Batch;
    const uint64_t n = std::min<uint64_t>(kLookupAllBatch, g_.keys.size() - pos_);
    step.batch.types.assign(n, OpType::Lookup);
    step.batch.keys.assign(g_.keys.begin() + static_cast<std::ptrdiff_t>(pos_),
                           g_.keys.begin() + static_cast<std::ptrdiff_t>(pos_ + n));
    step.batch.args.assign(n, 0);
    pos_ += n;
    return true;
  }

 private:
  GraphEdges g_;
  WorkloadHeader header_;
  int state_ = 0;
  uint64_t pos_ = 0;
};

}  // namespace

std::unique_ptr<StepSource> open_graph_file_workload(const std::string& path) {
  return std::make_unique<GraphFileSource>(path);
}

WorkloadSummary summarize_graph_file_workload(const std::string& path) {
  return lookup_all_summary("edge-exists", read_graph_file(path).keys.size(), KeyType::U64);
}

}  // namespace gpudict
