#include "workloads/spec.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <cctype>
#include <map>
#include <set>
#include <sstream>

#include "core/common/errors.hpp"

namespace gpudict {

namespace fs = std::filesystem;

std::string SourcePos::str() const {
  if (line == 0) return file;
  return file + ":" + std::to_string(line) + ":" + std::to_string(column);
}

void throw_spec_error(const SourcePos& pos, const std::string& field, const std::string& what,
                      const std::string& expected) {
  std::string msg = pos.str() + ": ";
  if (!field.empty()) msg += field + ": ";
  msg += what;
  if (!expected.empty()) msg += " (" + expected + ")";
  // One line, whatever the pieces held.
  std::replace(msg.begin(), msg.end(), '\n', ' ');
  throw InputError(msg);
}

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string suggestion(const std::string& name, const std::vector<std::string>& valid) {
  size_t best = ~size_t{0};
  std::string best_name;
  for (const std::string& v : valid) {
    const size_t d = edit_distance(name, v);
    if (d < best) {
      best = d;
      best_name = v;
    }
  }
  const size_t limit = std::max<size_t>(2, name.size() / 3);
  if (!best_name.empty() && best <= limit && best < name.size()) return "did you mean '" + best_name + "'?";
  // An abbreviation: "zipf" for "zipfian".
  if (name.size() >= 3)
    for (const std::string& v : valid)
      if (v.compare(0, name.size(), name) == 0) return "did you mean '" + v + "'?";
  return "";
}

namespace {

using Names = std::vector<std::string>;

std::string join(const Names& names) {
  std::string s;
  for (size_t i = 0; i < names.size(); ++i) s += (i ? ", " : "") + names[i];
  return s;
}

std::string fmt_double(double v) {
  std::ostringstream os;
  os.precision(15);
  os << v;
  return os.str();
}

bool contains(const Names& names, const std::string& n) {
  return std::find(names.begin(), names.end(), n) != names.end();
}

class Parser {
 public:
  Parser(std::string path, const WidthOverride& widths) : path_(std::move(path)), widths_(widths) {
    dir_ = fs::path(path_).parent_path();
  }

  WorkloadSpec parse() {
    std::string text = read_text();
    YAML::Node root;
    try {
      root = YAML::Load(text);
    } catch (const YAML::ParserException& e) {
      SourcePos p{path_, static_cast<uint64_t>(std::max(0, e.mark.line)) + 1,
                  static_cast<uint64_t>(std::max(0, e.mark.column)) + 1};
      if (e.mark.is_null()) p.line = 0;
      throw_spec_error(p, "yaml", "malformed YAML: " + e.msg, "valid YAML syntax");
    } catch (const YAML::Exception& e) {
      throw_spec_error(SourcePos{path_, 0, 0}, "yaml", std::string("malformed YAML: ") + e.what(),
                       "valid YAML syntax");
    }
    if (!root.IsDefined() || root.IsNull())
      throw_spec_error(SourcePos{path_, 1, 1}, "workload", "the file is empty",
                       "a map with steps and optionally name, seed, key_type, value_type, initial");
    if (!root.IsMap())
      throw_spec_error(pos(root), "workload", "the document is not a map",
                       "a map with steps and optionally name, seed, key_type, value_type, initial");

    WorkloadSpec spec;
    spec.path = path_;
    const Fields top = fields(root, "", {"name", "seed", "key_type", "value_type", "undirected", "initial", "steps"});
    spec.name = fs::path(path_).stem().string();
    if (auto n = top.get("name")) spec.name = string_value(n, "name");
    if (auto n = top.get("seed")) spec.seed = u64(n, "seed", "an integer 0..2^64-1");
    if (auto n = top.get("key_type")) spec.key_type = key_type(n, "key_type");
    if (auto n = top.get("value_type")) spec.value_type = key_type(n, "value_type");
    // Files keep the widths the YAML declares; everything else takes the override.
    file_key_type_ = spec.key_type;
    file_value_type_ = spec.value_type;
    if (widths_.key_type) spec.key_type = *widths_.key_type;
    if (widths_.value_type) spec.value_type = *widths_.value_type;
    key_type_ = spec.key_type;
    value_type_ = spec.value_type;
    if (auto n = top.get("undirected")) {
      spec.undirected = boolean(n, "undirected");
      if (spec.undirected && key_type_ != KeyType::U64)
        fail(n, "undirected", "an undirected graph's edges are 64-bit keys u * 2^32 + v", "key_type: u64");
    }
    if (auto n = top.get("initial")) spec.initial = initial(n, "initial");
    if (auto n = top.get("steps")) steps(n, "steps", spec.steps);
    return spec;
  }

 private:
  // ---- the fields of one map, checked against the valid names
  struct Fields {
    std::map<std::string, YAML::Node> values;
    std::map<std::string, YAML::Node> keys;
    YAML::Node get(const std::string& name) const {
      auto it = values.find(name);
      return it == values.end() ? YAML::Node(YAML::NodeType::Undefined) : it->second;
    }
    bool has(const std::string& name) const { return values.count(name) != 0; }
  };

  SourcePos pos(const YAML::Node& n) const {
    const YAML::Mark m = n.Mark();
    if (m.is_null() || m.line < 0) return SourcePos{path_, 0, 0};
    return SourcePos{path_, static_cast<uint64_t>(m.line) + 1, static_cast<uint64_t>(m.column) + 1};
  }

  [[noreturn]] void fail(const YAML::Node& n, const std::string& field, const std::string& what,
                         const std::string& expected) const {
    throw_spec_error(pos(n), field, what, expected);
  }

  static std::string sub(const std::string& parent, const std::string& name) {
    return parent.empty() ? name : parent + "." + name;
  }

  static std::string describe(const YAML::Node& n) {
    switch (n.Type()) {
      case YAML::NodeType::Map: return "a map";
      case YAML::NodeType::Sequence: return "a list";
      case YAML::NodeType::Null: return "an empty value";
      case YAML::NodeType::Scalar: return "'" + n.Scalar() + "'";
      default: return "nothing";
    }
  }

  // `extra_valid`: names valid in some other variant of this map (reported differently).
  Fields fields(const YAML::Node& map, const std::string& path, const Names& valid,
                const std::string& unknown_context = "", const Names& extra_valid = {}) const {
    if (!map.IsMap()) fail(map, path.empty() ? "workload" : path, "got " + describe(map), "a map");
    Fields f;
    for (auto it = map.begin(); it != map.end(); ++it) {
      const YAML::Node k = it->first;  // a copy: `it->` yields a temporary proxy
      const YAML::Node v = it->second;
      if (!k.IsScalar()) fail(k, path, "a field name is " + describe(k), "a plain field name");
      const std::string name = k.Scalar();
      if (!contains(valid, name)) {
        std::string what;
        if (!unknown_context.empty() && contains(extra_valid, name)) {
          what = "not a parameter of " + unknown_context;
        } else {
          what = "unknown field";
          const std::string s = suggestion(name, valid);
          if (!s.empty()) what += ", " + s;
        }
        fail(k, sub(path, name), what, "expected one of: " + join(valid));
      }
      if (f.values.count(name)) fail(k, sub(path, name), "field given twice", "each field at most once");
      f.values[name] = v;
      f.keys[name] = k;
    }
    return f;
  }

  std::string read_text() const {
    std::error_code ec;
    if (!fs::exists(path_, ec))
      throw_spec_error(SourcePos{path_, 0, 0}, "", "no such file", "an existing YAML workload");
    std::ifstream in(path_, std::ios::binary);
    if (!in)
      throw_spec_error(SourcePos{path_, 0, 0}, "", std::string("cannot open: ") + std::strerror(errno),
                       "a readable YAML workload");
    std::ostringstream os;
    os << in.rdbuf();
    return os.str();
  }

  std::string resolve(const std::string& file) const {
    fs::path p(file);
    if (p.is_absolute() || dir_.empty()) return p.string();
    return (dir_ / p).string();
  }

  // ---- scalars

  std::string scalar(const YAML::Node& n, const std::string& field, const std::string& expected) const {
    if (!n.IsScalar()) fail(n, field, "got " + describe(n), expected);
    return n.Scalar();
  }

  std::string string_value(const YAML::Node& n, const std::string& field) const {
    const std::string s = scalar(n, field, "a non-empty string");
    if (s.empty()) fail(n, field, "empty string", "a non-empty string");
    return s;
  }

  // Integers: decimal or 0x hexadecimal, '_' separators allowed between digits.
  uint64_t u64(const YAML::Node& n, const std::string& field, const std::string& expected) const {
    const std::string s = scalar(n, field, expected);
    size_t i = 0;
    if (!s.empty() && s[0] == '+') i = 1;
    if (!s.empty() && s[0] == '-') {
      bool digits = s.size() > 1;
      for (size_t j = 1; j < s.size(); ++j) digits = digits && (std::isdigit(static_cast<unsigned char>(s[j])) || s[j] == '.');
      fail(n, field, digits ? "negative value " + s : "'" + s + "' is not an integer", expected);
    }
    unsigned base = 10;
    if (s.size() >= i + 2 && s[i] == '0' && (s[i + 1] == 'x' || s[i + 1] == 'X')) {
      base = 16;
      i += 2;
    }
    uint64_t v = 0;
    bool any = false;
    for (; i < s.size(); ++i) {
      const char c = s[i];
      if (c == '_') {  // a separator: after a digit and before one (not "1_", "1__0" or "_1")
        if (!any || i + 1 >= s.size() || s[i + 1] == '_') fail(n, field, "'" + s + "' is not an integer", expected);
        continue;
      }
      unsigned d;
      if (c >= '0' && c <= '9') d = static_cast<unsigned>(c - '0');
      else if (base == 16 && c >= 'a' && c <= 'f') d = static_cast<unsigned>(c - 'a' + 10);
      else if (base == 16 && c >= 'A' && c <= 'F') d = static_cast<unsigned>(c - 'A' + 10);
      else fail(n, field, "'" + s + "' is not an integer", expected);
      if (v > (~0ull - d) / base) fail(n, field, "'" + s + "' does not fit in 64 bits", expected);
      v = v * base + d;
      any = true;
    }
    if (!any) fail(n, field, "'" + s + "' is not an integer", expected);
    return v;
  }

  uint64_t positive(const YAML::Node& n, const std::string& field, uint64_t max = ~0ull) const {
    const std::string expected =
        max == ~0ull ? "a positive integer" : "an integer 1.." + std::to_string(max);
    const uint64_t v = u64(n, field, expected);
    if (v == 0) fail(n, field, "zero", expected);
    if (v > max) fail(n, field, std::to_string(v) + " is too large", expected);
    return v;
  }

  uint64_t key_value(const YAML::Node& n, const std::string& field) const {
    const std::string expected = "a key 0.." + std::to_string(max_of(key_type_)) + " for key_type " +
                                 std::string(type_name(key_type_));
    const uint64_t v = u64(n, field, expected);
    if (v > max_of(key_type_)) fail(n, field, "key " + std::to_string(v) + " is out of range", expected);
    return v;
  }

  uint64_t value_value(const YAML::Node& n, const std::string& field) const {
    const std::string expected = "a value 0.." + std::to_string(max_of(value_type_)) + " for value_type " +
                                 std::string(type_name(value_type_));
    const uint64_t v = u64(n, field, expected);
    if (v > max_of(value_type_)) fail(n, field, "value " + std::to_string(v) + " is out of range", expected);
    return v;
  }

  double real(const YAML::Node& n, const std::string& field, const std::string& expected) const {
    const std::string s = scalar(n, field, expected);
    const char* b = s.c_str();
    char* e = nullptr;
    errno = 0;
    const double v = std::strtod(b, &e);
    if (s.empty() || e != b + s.size() || !std::isfinite(v)) fail(n, field, "'" + s + "' is not a finite number", expected);
    // Decimal only: strtod also reads hexadecimal floats ("0x1p-1").
    if (s.find_first_of("xX") != std::string::npos) fail(n, field, "'" + s + "' is not a decimal number", expected);
    if (errno == ERANGE) fail(n, field, "'" + s + "' is out of the range of a double (it under- or overflows)", expected);
    return v;
  }

  double real_in(const YAML::Node& n, const std::string& field, double lo, double hi, bool lo_open,
                 const std::string& expected) const {
    const double v = real(n, field, expected);
    if (v < lo || v > hi || (lo_open && v == lo)) fail(n, field, fmt_double(v) + " is out of range", expected);
    return v;
  }

  bool boolean(const YAML::Node& n, const std::string& field) const {
    const std::string s = scalar(n, field, "true or false");
    if (s == "true" || s == "True" || s == "TRUE") return true;
    if (s == "false" || s == "False" || s == "FALSE") return false;
    fail(n, field, "'" + s + "' is not a boolean", "true or false");
  }

  // One of `names`; returns its index.
  size_t choice(const YAML::Node& n, const std::string& field, const Names& names, const std::string& what) const {
    const std::string s = scalar(n, field, "one of: " + join(names));
    for (size_t i = 0; i < names.size(); ++i)
      if (names[i] == s) return i;
    std::string msg = "unknown " + what + " '" + s + "'";
    const std::string sug = suggestion(s, names);
    if (!sug.empty()) msg += ", " + sug;
    fail(n, field, msg, "one of: " + join(names));
  }

  KeyType key_type(const YAML::Node& n, const std::string& field) const {
    return choice(n, field, {"u32", "u64"}, "type") == 0 ? KeyType::U32 : KeyType::U64;
  }

  ExecMode mode(const YAML::Node& n, const std::string& field) const {
    return choice(n, field, {"phased", "concurrent"}, "mode") == 0 ? ExecMode::Phased : ExecMode::Concurrent;
  }

  // ---- distributions

  KeyDistSpec key_dist(const YAML::Node& n, const std::string& field) const {
    KeyDistSpec d;
    d.min = 0;
    d.max = max_of(key_type_);
    const Names kinds = {"uniform", "zipfian", "sequential", "normal", "hotset", "rmat"};
    // rmat's keys are edges u * 2^32 + v: 64-bit keys only.
    auto require_u64 = [&](const YAML::Node& at) {
      if (d.kind == DistKind::Rmat && key_type_ != KeyType::U64)
        fail(at, field, "distribution 'rmat' draws graph edges as 64-bit keys u * 2^32 + v", "key_type: u64");
    };
    if (n.IsScalar()) {  // shorthand: the distribution's name, default parameters
      d.kind = static_cast<DistKind>(choice(n, field, kinds, "distribution"));
      require_u64(n);
      return d;
    }
    if (!n.IsMap()) fail(n, field, "got " + describe(n), "a distribution name or a map with distribution:");
    // The distribution first: it decides which other fields are valid.
    for (auto it = n.begin(); it != n.end(); ++it)
      if (it->first.IsScalar() && it->first.Scalar() == "distribution")
        d.kind = static_cast<DistKind>(choice(it->second, sub(field, "distribution"), kinds, "distribution"));
    require_u64(n);
    Names valid = {"distribution", "min", "max"};
    switch (d.kind) {
      case DistKind::Rmat: valid = {"distribution", "scale", "a", "b", "c", "scramble"}; break;
      case DistKind::Uniform: break;
      case DistKind::Zipfian: valid.insert(valid.end(), {"exponent", "scramble"}); break;
      case DistKind::Sequential: valid.insert(valid.end(), {"start", "stride"}); break;
      case DistKind::Normal: valid.insert(valid.end(), {"mean", "stddev"}); break;
      case DistKind::Hotset: valid.insert(valid.end(), {"hot_fraction", "hot_probability", "scramble"}); break;
    }
    const Names all = {"exponent", "scramble", "start", "stride", "mean", "stddev", "hot_fraction", "hot_probability",
                       "scale", "a", "b", "c", "min", "max"};
    const Fields f = fields(n, field, valid, "distribution '" + std::string(dist_name(d.kind)) + "'", all);
    if (auto v = f.get("min")) d.min = key_value(v, sub(field, "min"));
    if (auto v = f.get("max")) d.max = key_value(v, sub(field, "max"));
    if (d.min > d.max)
      fail(f.get("min") ? f.get("min") : f.get("max"), sub(field, "min"),
           "min " + std::to_string(d.min) + " is above max " + std::to_string(d.max), "min <= max");
    if (auto v = f.get("exponent")) d.exponent = real_in(v, sub(field, "exponent"), 0, 1e6, true, "a number > 0");
    if (auto v = f.get("scramble")) d.scramble = boolean(v, sub(field, "scramble"));
    if (auto v = f.get("start")) d.start = u64(v, sub(field, "start"), "a rank 0..2^64-1");
    if (auto v = f.get("stride")) d.stride = u64(v, sub(field, "stride"), "an integer 0..2^64-1");
    if (auto v = f.get("mean")) d.mean = real_in(v, sub(field, "mean"), -1e6, 1e6, false, "a fraction of the domain, e.g. 0.5");
    if (auto v = f.get("stddev"))
      d.stddev = real_in(v, sub(field, "stddev"), 0, 1e6, false, "a fraction of the domain >= 0, e.g. 0.1");
    if (auto v = f.get("hot_fraction"))
      d.hot_fraction = real_in(v, sub(field, "hot_fraction"), 0, 1, true, "a fraction in (0, 1]");
    if (auto v = f.get("hot_probability"))
      d.hot_probability = real_in(v, sub(field, "hot_probability"), 0, 1, false, "a probability in [0, 1]");
    if (auto v = f.get("scale")) {
      const uint64_t sc = u64(v, sub(field, "scale"), "an integer 1..32 (2^scale vertices)");
      if (sc < 1 || sc > 32) fail(v, sub(field, "scale"), "scale " + std::to_string(sc) + " is outside 1..32",
                                  "an integer 1..32 (2^scale vertices)");
      d.scale = static_cast<int>(sc);
    }
    if (auto v = f.get("a")) d.a = real_in(v, sub(field, "a"), 0, 1, false, "a probability in [0, 1]");
    if (auto v = f.get("b")) d.b = real_in(v, sub(field, "b"), 0, 1, false, "a probability in [0, 1]");
    if (auto v = f.get("c")) d.c = real_in(v, sub(field, "c"), 0, 1, false, "a probability in [0, 1]");
    if (d.kind == DistKind::Rmat && d.a + d.b + d.c > 1.0)
      fail(n, field, "a + b + c is " + std::to_string(d.a + d.b + d.c) + ", above 1",
           "quadrant probabilities a, b, c with a + b + c <= 1 (d = 1 - a - b - c)");
    return d;
  }

  RangeLengthSpec range_length(const YAML::Node& n, const std::string& field) const {
    RangeLengthSpec r;
    if (n.IsScalar()) {  // shorthand: a fixed length in keys
      r.kind = RangeLenKind::Fixed;
      r.length = positive(n, field);
      return r;
    }
    if (!n.IsMap()) fail(n, field, "got " + describe(n), "a length or a map with distribution:");
    const Names kinds = {"fixed", "uniform", "geometric"};
    for (auto it = n.begin(); it != n.end(); ++it)
      if (it->first.IsScalar() && it->first.Scalar() == "distribution")
        r.kind = static_cast<RangeLenKind>(choice(it->second, sub(field, "distribution"), kinds, "range length distribution"));
    Names valid = {"distribution", "unit"};
    std::string kind_name;
    switch (r.kind) {
      case RangeLenKind::Fixed: valid.push_back("length"); kind_name = "fixed"; break;
      case RangeLenKind::Uniform: valid.insert(valid.end(), {"min", "max"}); kind_name = "uniform"; break;
      case RangeLenKind::Geometric: valid.push_back("mean"); kind_name = "geometric"; break;
    }
    const Fields f = fields(n, field, valid, "range length distribution '" + kind_name + "'", {"length", "min", "max", "mean"});
    if (auto v = f.get("unit"))
      r.unit = static_cast<RangeUnit>(choice(v, sub(field, "unit"), {"keys", "results", "vertices"}, "unit"));
    if (r.unit == RangeUnit::Vertices && key_type_ != KeyType::U64)
      fail(f.get("unit"), sub(field, "unit"), "unit 'vertices' spans vertex blocks of graph edge keys u * 2^32 + v",
           "key_type: u64");
    if (auto v = f.get("length")) r.length = positive(v, sub(field, "length"));
    if (r.kind == RangeLenKind::Uniform) {
      r.min = 1;
      r.max = 16;
      if (auto v = f.get("min")) r.min = positive(v, sub(field, "min"));
      if (auto v = f.get("max")) r.max = positive(v, sub(field, "max"));
      if (r.min > r.max)
        fail(f.get("min") ? f.get("min") : f.get("max"), sub(field, "min"),
             "min " + std::to_string(r.min) + " is above max " + std::to_string(r.max), "min <= max");
    }
    if (auto v = f.get("mean")) r.mean = real_in(v, sub(field, "mean"), 1, 1e18, false, "a mean length >= 1");
    return r;
  }

  // ---- initial

  InitialSpec initial(const YAML::Node& n, const std::string& field) const {
    InitialSpec in;
    in.pos = pos(n);
    const Fields f = fields(n, field, {"count", "keys", "values", "file", "format", "width", "allow_empty", "graph"});
    in.count_pos = in.pos;
    if (f.has("count")) in.count_pos = pos(f.get("count"));

    if (auto g = f.get("graph")) {
      for (const char* other : {"count", "keys", "file", "format", "width", "allow_empty"})
        if (f.has(other))
          fail(f.keys.at(other), sub(field, other), "cannot be combined with graph (the graph's edges are the keys)",
               "either graph or count/keys/file");
      const std::string gf = sub(field, "graph");
      if (key_type_ != KeyType::U64)
        fail(g, gf, "a graph's edges are 64-bit keys u * 2^32 + v", "key_type: u64 (or --key-type u64)");
      const Fields gfields = fields(g, gf, {"family", "scale"});
      if (!gfields.has("family")) fail(g, sub(gf, "family"), "missing", "family: rgg, delaunay or road");
      in.graph_family = static_cast<GraphFamily>(
          choice(gfields.get("family"), sub(gf, "family"), {"rgg", "delaunay", "road"}, "graph family"));
      if (in.graph_family != GraphFamily::Rgg && !delaunay_available())
        fail(gfields.get("family"), sub(gf, "family"), "this gpudict was built without Qhull (libqhull-dev)",
             "rgg, or a build with Qhull (scripts/setup.sh installs it)");
      const std::string scales = "an integer from 1 to " + std::to_string(kMaxGraphScale) + " (2^scale vertices)";
      if (!gfields.has("scale")) fail(g, sub(gf, "scale"), "missing", "scale: " + scales);
      const uint64_t sc = u64(gfields.get("scale"), sub(gf, "scale"), scales);
      if (sc < 1 || sc > kMaxGraphScale) fail(gfields.get("scale"), sub(gf, "scale"), "scale " + std::to_string(sc), scales);
      in.graph_scale = static_cast<uint32_t>(sc);
      in.source = InitialSpec::Source::Graph;
    } else if (auto file = f.get("file")) {
      if (f.has("keys"))
        fail(f.keys.at("keys"), sub(field, "keys"), "a key distribution cannot be combined with file",
             "either file or count with keys");
      in.source = InitialSpec::Source::File;
      in.file_pos = pos(file);
      const std::string path = resolve(string_value(file, sub(field, "file")));
      KeyFileFormat format = KeyFileFormat::Auto;
      if (auto v = f.get("format"))
        format = static_cast<KeyFileFormat>(choice(v, sub(field, "format"), {"auto", "raw", "sosd"}, "format"));
      unsigned width = 0;
      if (auto v = f.get("width")) {
        const uint64_t w = u64(v, sub(field, "width"), "4 or 8");
        if (w != 4 && w != 8) fail(v, sub(field, "width"), "width " + std::to_string(w), "4 or 8");
        if (format == KeyFileFormat::Sosd)
          fail(f.keys.at("width"), sub(field, "width"), "width applies to raw files only (a SOSD header fixes it)",
               "format raw or auto");
        width = static_cast<unsigned>(w);
      }
      bool allow_empty = false;
      if (auto v = f.get("allow_empty")) allow_empty = boolean(v, sub(field, "allow_empty"));
      try {
        in.file = probe_key_file(path, format, width, width_bytes(file_key_type_));
        // An empty key file is an error unless the workload says it is meant.
        if (!allow_empty)
          require_keys(in.file, "at least one key; to start from it empty on purpose, add allow_empty: true to "
                                "initial");
      } catch (const InputError& e) {
        throw_spec_error(in.file_pos, sub(field, "file"), e.what(), "");
      }
      in.count = in.file.count;
      if (auto v = f.get("count")) {
        const uint64_t c = positive(v, sub(field, "count"));
        if (c > in.file.count)
          fail(v, sub(field, "count"),
               "count " + std::to_string(c) + " is larger than the file holds (" + std::to_string(in.file.count) +
                   " keys in " + path + ")",
               "at most " + std::to_string(in.file.count));
        in.count = c;
      }
    } else {
      for (const char* only : {"format", "width", "allow_empty"})
        if (f.has(only))
          fail(f.keys.at(only), sub(field, only), "only meaningful with file", "file: a key file");
      if (!f.has("count"))
        fail(n, sub(field, "count"), "missing", "count: the number of generated keys, or file: a key file");
      in.source = InitialSpec::Source::Generated;
      in.count = u64(f.get("count"), sub(field, "count"), "a positive integer");
      if (in.count == 0)
        fail(f.get("count"), sub(field, "count"), "zero",
             "a positive integer; for an empty initial contents leave initial out");
      in.keys.max = max_of(key_type_);
      if (auto v = f.get("keys")) in.keys = key_dist(v, sub(field, "keys"));
      const uint64_t last = in.keys.max - in.keys.min;
      if (last != ~0ull && in.count > last + 1)
        fail(f.get("count"), sub(field, "count"),
             "count " + std::to_string(in.count) + " is more than the " + std::to_string(last + 1) +
                 " keys in [" + std::to_string(in.keys.min) + ", " + std::to_string(in.keys.max) + "]",
             "unique keys: at most " + std::to_string(last + 1));
      if (in.keys.kind == DistKind::Sequential) {
        const uint64_t period = sequential_period(last, in.keys.stride);
        if (in.count > period)
          fail(f.get("count"), sub(field, "count"),
               "sequential keys with stride " + std::to_string(in.keys.stride) + " repeat after " +
                   std::to_string(period) + " keys",
               "count <= " + std::to_string(period) + ", or a stride coprime to the domain size");
      }
    }

    if (auto v = f.get("values")) {
      const std::string vf = sub(field, "values");
      if (v.IsMap() && in.source == InitialSpec::Source::Graph)
        fail(v, vf, "a values file with a generated graph (its edge count is known only once it is made)",
             "random, key or index");
      if (v.IsMap()) {
        const Fields vfields = fields(v, vf, {"file"});
        if (!vfields.has("file")) fail(v, sub(vf, "file"), "missing", "values: {file: PATH}");
        in.values = InitialValues::File;
        in.values_file = resolve(string_value(vfields.get("file"), sub(vf, "file")));
        in.values_pos = pos(vfields.get("file"));
        const unsigned w = width_bytes(file_value_type_);
        in.values_file_width = w;
        uint64_t size = 0;
        try {
          size = file_size_or_throw(in.values_file);
        } catch (const InputError& e) {
          throw_spec_error(pos(vfields.get("file")), sub(vf, "file"), e.what(), "");
        }
        if (size / w < in.count)
          fail(vfields.get("file"), sub(vf, "file"),
               in.values_file + " holds " + std::to_string(size / w) + " values of " + std::to_string(w) +
                   " bytes, fewer than the " + std::to_string(in.count) + " initial keys",
               "a raw little-endian file of at least " + std::to_string(in.count) + " values");
      } else {
        in.values = static_cast<InitialValues>(
            choice(v, vf, {"random", "key", "index"}, "value source (or {file: PATH})"));
      }
    }
    return in;
  }

  static uint64_t gcd(uint64_t a, uint64_t b) {
    while (b) {
      const uint64_t t = a % b;
      a = b;
      b = t;
    }
    return a;
  }

  // Distinct ranks of a sequential progression over [0, last] before it repeats
  // (~0 stands for 2^64).
  static uint64_t sequential_period(uint64_t last, uint64_t stride) {
    if (last == ~0ull) {
      if (stride == 0) return 1;
      int tz = 0;
      while (((stride >> tz) & 1) == 0) ++tz;
      return tz == 0 ? ~0ull : (1ull << (64 - tz));
    }
    const uint64_t n = last + 1;
    const uint64_t s = stride % n;
    return n / gcd(n, s);  // gcd(n, 0) = n
  }

  // ---- steps

  void check_snapshot_use(const YAML::Node& n, const std::string& field, const std::string& name) const {
    if (live_.count(name)) return;
    auto d = dropped_.find(name);
    if (d != dropped_.end())
      fail(n, field, "snapshot '" + name + "' is used after drop_snapshot at line " + std::to_string(d->second),
           "a live snapshot");
    fail(n, field, "snapshot '" + name + "' is used before it is created",
         live_.empty() ? "no snapshot is live here; create one with a snapshot: step first"
                       : "a live snapshot: " + join(Names(live_.begin(), live_.end())));
  }

  void steps(const YAML::Node& n, const std::string& field, std::vector<StepSpec>& out) {
    if (n.IsNull()) return;
    if (!n.IsSequence()) fail(n, field, "got " + describe(n), "a list of steps");
    // `cleanup` and its synonym `flush` (the slab hash's name for it) are bare
    // words; they are listed with the map kinds so a misspelling of either
    // gets a suggestion.
    const Names words = {"cleanup", "flush"};
    const Names kinds = {"phase", "batch", "snapshot", "drop_snapshot", "cleanup", "flush"};
    const std::string expected_step =
        "a map with one of: phase, batch, snapshot, drop_snapshot; or the word cleanup (or flush)";
    size_t index = 0;
    for (auto it = n.begin(); it != n.end(); ++it, ++index) {
      const YAML::Node item = *it;
      const std::string f = field + "[" + std::to_string(index) + "]";
      if (item.IsScalar() && contains(words, item.Scalar())) {  // `- cleanup` / `- flush`: no parameters
        StepSpec s;
        s.pos = pos(item);
        s.kind = StepSpecKind::Cleanup;
        out.push_back(std::move(s));
        continue;
      }
      if (item.IsScalar()) {
        std::string what = "unknown step '" + item.Scalar() + "'";
        const std::string sug = suggestion(item.Scalar(), kinds);
        if (!sug.empty()) what += ", " + sug;
        fail(item, f, what, expected_step);
      }
      if (!item.IsMap()) fail(item, f, "got " + describe(item), expected_step);
      const Fields fs = fields(item, f, kinds);
      if (fs.values.size() != 1)
        fail(item, f, fs.values.empty() ? "empty step" : "a step with " + std::to_string(fs.values.size()) + " kinds",
             "exactly one of: phase, batch, snapshot, drop_snapshot; or the word cleanup (or flush)");
      const std::string kind = fs.values.begin()->first;
      const YAML::Node body = fs.values.begin()->second;
      StepSpec s;
      s.pos = pos(fs.keys.at(kind));
      const std::string bf = sub(f, kind);
      if (contains(words, kind)) {  // `- flush:` (an empty map) is still the bare word; parameters are not
        if (!body.IsNull())
          fail(body, bf, kind + " takes no parameters", "the bare word: - " + kind);
        s.kind = StepSpecKind::Cleanup;
      } else if (kind == "phase") {
        s.kind = StepSpecKind::Phase;
        s.phase = phase(body, bf, index);
      } else if (kind == "batch") {
        s.kind = StepSpecKind::Batch;
        batch(body, bf, index, s);
      } else if (kind == "snapshot") {
        s.kind = StepSpecKind::Snapshot;
        s.name = string_value(body, bf);
        if (live_.count(s.name))
          fail(body, bf, "snapshot '" + s.name + "' already exists", "a name not used by a live snapshot");
        live_.insert(s.name);
        dropped_.erase(s.name);
      } else {
        s.kind = StepSpecKind::DropSnapshot;
        s.name = string_value(body, bf);
        if (!live_.count(s.name)) {
          auto d = dropped_.find(s.name);
          if (d != dropped_.end())
            fail(body, bf, "snapshot '" + s.name + "' is dropped twice (first at line " + std::to_string(d->second) + ")",
                 "a live snapshot");
          fail(body, bf, "snapshot '" + s.name + "' does not exist", "a snapshot created by an earlier snapshot: step");
        }
        live_.erase(s.name);
        dropped_[s.name] = pos(body).line;
      }
      out.push_back(std::move(s));
    }
  }

  // A graph operation (vertex_delete, triangles) needs edge keys and a phased batch.
  void check_graph_op(const YAML::Node& n, const std::string& field, ExecMode mode) const {
    if (key_type_ != KeyType::U64) fail(n, field, "a graph operation on the edge keys u * 2^32 + v", "key_type: u64");
    if (mode != ExecMode::Phased) fail(n, field, "a graph operation in a concurrent batch", "mode: phased");
  }

  PhaseSpec phase(const YAML::Node& n, const std::string& field, size_t index) const {
    PhaseSpec p;
    const Fields f = fields(n, field,
                            {"name", "batches", "batch_size", "mode", "mix", "keys", "hit_ratio", "range_length", "snapshot"});
    p.name = "phase" + std::to_string(index);
    if (auto v = f.get("name")) p.name = string_value(v, sub(field, "name"));
    if (!f.has("batches")) fail(n, sub(field, "batches"), "missing", "batches: the number of batches, >= 1");
    if (!f.has("batch_size")) fail(n, sub(field, "batch_size"), "missing", "batch_size: operations per batch, >= 1");
    if (!f.has("mix")) fail(n, sub(field, "mix"), "missing", "mix: {insert: 0.5, lookup: 0.5, ...} summing to 1");
    p.batches = positive(f.get("batches"), sub(field, "batches"));
    p.batch_size = positive(f.get("batch_size"), sub(field, "batch_size"), 0xFFFFFFFFull);
    if (auto v = f.get("mode")) p.mode = mode(v, sub(field, "mode"));
    {
      const YAML::Node m = f.get("mix");
      const std::string mf = sub(field, "mix");
      Names ops;
      for (OpType t : kAllOpTypes) ops.emplace_back(op_name(t));
      const Fields mixf = fields(m, mf, ops);
      // Fractions summing to 1, or operation counts summing to batch_size
      // (one triangle count after 2^22 inserts is {insert: 4194304, triangles: 1}).
      double sum = 0;
      bool counts = true;
      for (int i = 0; i < kNumOpTypes; ++i) {
        if (auto v = mixf.get(ops[i])) {
          p.mix[i] = real_in(v, sub(mf, ops[i]), 0, static_cast<double>(p.batch_size), false,
                             "a fraction in [0, 1] or an operation count");
          sum += p.mix[i];
          counts &= p.mix[i] == std::floor(p.mix[i]);
        }
      }
      const bool fractions = std::fabs(sum - 1.0) <= 1e-9;
      if (!fractions && !(counts && sum == static_cast<double>(p.batch_size)))
        fail(m, mf, "operation mix sums to " + fmt_double(sum),
             "fractions summing to 1 within 1e-9, or operation counts summing to batch_size " +
                 std::to_string(p.batch_size));
      for (OpType t : {OpType::VertexDelete, OpType::Triangles})
        if (p.mix[static_cast<int>(t)] > 0) check_graph_op(m, sub(mf, std::string(op_name(t))), p.mode);
    }
    p.keys.max = max_of(key_type_);
    if (auto v = f.get("keys")) p.keys = key_dist(v, sub(field, "keys"));
    if (auto v = f.get("hit_ratio"))
      p.hit_ratio = real_in(v, sub(field, "hit_ratio"), 0, 1, false, "a fraction in [0, 1]");
    if (auto v = f.get("range_length")) p.range_length = range_length(v, sub(field, "range_length"));
    if (auto v = f.get("snapshot")) {
      p.snapshot = string_value(v, sub(field, "snapshot"));
      check_snapshot_use(v, sub(field, "snapshot"), p.snapshot);
    }
    return p;
  }

  void batch(const YAML::Node& n, const std::string& field, size_t index, StepSpec& s) const {
    const Fields f = fields(n, field, {"name", "mode", "snapshot", "ops"});
    s.name = "batch" + std::to_string(index);
    if (auto v = f.get("name")) s.name = string_value(v, sub(field, "name"));
    if (auto v = f.get("mode")) s.batch.mode = mode(v, sub(field, "mode"));
    if (auto v = f.get("snapshot")) {
      s.batch.snapshot = string_value(v, sub(field, "snapshot"));
      check_snapshot_use(v, sub(field, "snapshot"), s.batch.snapshot);
    }
    const std::string of = sub(field, "ops");
    if (!f.has("ops")) fail(n, of, "missing", "ops: a list of operations such as [insert, KEY, VALUE]");
    const YAML::Node ops = f.get("ops");
    if (!ops.IsSequence()) fail(ops, of, "got " + describe(ops), "a list of operations such as [lookup, KEY]");
    if (ops.size() == 0) fail(ops, of, "empty batch", "at least one operation");
    if (ops.size() > 0xFFFFFFFFull) fail(ops, of, "too many operations", "at most 4294967295");
    Names names;
    for (OpType t : kAllOpTypes) names.emplace_back(op_name(t));
    size_t i = 0;
    for (auto it = ops.begin(); it != ops.end(); ++it, ++i) {
      const YAML::Node op = *it;
      const std::string opf = of + "[" + std::to_string(i) + "]";
      const std::string shape =
          "[insert, KEY, VALUE], [delete, KEY], [lookup, KEY], [count, LO, HI], [range, LO, HI], [successor, KEY], "
          "[vertex_delete, U * 2^32] or [triangles]";
      if (!op.IsSequence() || op.size() == 0) fail(op, opf, "got " + describe(op), shape);
      const OpType t = static_cast<OpType>(choice(op[0], opf, names, "operation"));
      const size_t want = (t == OpType::Insert || t == OpType::Count || t == OpType::Range) ? 3
                          : t == OpType::Triangles                                         ? 1
                                                                                           : 2;
      if (op.size() != want)
        fail(op, opf, std::string(op_name(t)) + " with " + std::to_string(op.size() - 1) + " arguments",
             std::to_string(want - 1) + " arguments: " + shape);
      if (is_graph_op(t)) check_graph_op(op, opf, s.batch.mode);
      const uint64_t key = want > 1 ? key_value(op[1], opf) : 0;
      if (t == OpType::VertexDelete && (key & 0xFFFFFFFFull) != 0)
        fail(op[1], opf, "key " + std::to_string(key) + " is not a vertex's first key",
             "u * 2^32 (vertex u's block of edge keys starts there)");
      uint64_t arg = 0;
      if (t == OpType::Insert) arg = value_value(op[2], opf);
      else if (want == 3) arg = key_value(op[2], opf);
      s.batch.push(t, key, arg);
    }
  }

  std::string path_;
  fs::path dir_;
  WidthOverride widths_;
  KeyType key_type_ = KeyType::U32;  // the widths keys and values are checked against
  KeyType value_type_ = KeyType::U32;
  KeyType file_key_type_ = KeyType::U32;  // the widths the YAML declares (its raw files')
  KeyType file_value_type_ = KeyType::U32;
  std::set<std::string> live_;
  std::map<std::string, uint64_t> dropped_;  // name -> line of its drop_snapshot
};

}  // namespace

WorkloadSpec parse_workload_spec(const std::string& path, const WidthOverride& widths) {
  return Parser(path, widths).parse();
}

}  // namespace gpudict
