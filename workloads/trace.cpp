#include "workloads/trace.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <set>
#include <system_error>

#include <unistd.h>

#include "core/common/errors.hpp"
#include "workloads/keyfile.hpp"

namespace gpudict {

namespace fs = std::filesystem;

namespace {

constexpr size_t kChunk = size_t{1} << 20;
constexpr uint32_t kMaxName = 1u << 16;

class TraceReader {
 public:
  explicit TraceReader(const std::string& path) : path_(path) {
    size_ = file_size_or_throw(path);
    in_.open(path, std::ios::binary);
    if (!in_) throw InputError(path + ": cannot open: " + std::strerror(errno) + " (a readable trace)");
  }

  const std::string& path() const { return path_; }
  uint64_t offset() const { return offset_; }
  uint64_t remaining() const { return size_ - offset_; }
  bool at_end() const { return offset_ == size_; }

  [[noreturn]] void truncated(const std::string& what, uint64_t need) const {
    throw InputError("truncated trace: " + path_ + ": " + what + " at byte " + std::to_string(offset_) + " (" +
                     std::to_string(need) + " bytes needed, " + std::to_string(remaining()) +
                     " left; a complete trace ends with an END record)");
  }
  [[noreturn]] void corrupt(const std::string& what, const std::string& expected, uint64_t at) const {
    throw InputError("corrupt trace: " + path_ + ": " + what + " at byte " + std::to_string(at) + " (" + expected +
                     ")");
  }

  void read(void* p, uint64_t n, const std::string& what) {
    if (n > remaining()) truncated(what, n);
    in_.read(static_cast<char*>(p), static_cast<std::streamsize>(n));
    if (static_cast<uint64_t>(in_.gcount()) != n) truncated(what, n);
    offset_ += n;
  }
  uint64_t uint(unsigned width, const std::string& what) {
    unsigned char b[8];
    read(b, width, what);
    return load_le(b, width);
  }
  void skip(uint64_t n, const std::string& what) {
    if (n > remaining()) truncated(what, n);
    offset_ += n;
    in_.seekg(static_cast<std::streamoff>(offset_));
    if (!in_) truncated(what, n);
  }
  std::string name(const std::string& what) {
    const uint64_t at = offset_;
    const uint32_t len = static_cast<uint32_t>(uint(4, what + " length"));
    if (len > kMaxName) corrupt(what + " length " + std::to_string(len), "at most 65536 bytes", at);
    if (len > remaining()) truncated(what, len);
    std::string s(len, '\0');
    read(s.data(), len, what);
    return s;
  }
  void array(uint64_t n, unsigned width, std::vector<uint64_t>& out, const std::string& what) {
    if (n > remaining() / width) truncated(what, n * width);
    out.resize(n);
    buf_.resize(std::min<uint64_t>(kChunk, n * width));
    const uint64_t per = kChunk / width;
    for (uint64_t done = 0; done < n;) {
      const uint64_t k = std::min(per, n - done);
      read(buf_.data(), k * width, what);
      for (uint64_t i = 0; i < k; ++i) out[done + i] = load_le(buf_.data() + i * width, width);
      done += k;
    }
  }
  void bytes(uint64_t n, std::vector<uint8_t>& out, const std::string& what) {
    if (n > remaining()) truncated(what, n);
    out.resize(n);
    if (n) read(out.data(), n, what);
  }

  WorkloadHeader header() {
    WorkloadHeader h;
    h.path = path_;
    h.format = "trace";
    char magic[8];
    read(magic, 8, "header magic");
    if (std::memcmp(magic, kTraceMagic, 8) != 0) corrupt("bad magic", "a trace starts with GPUDICT1", 0);
    const uint64_t kat = offset_;
    const unsigned kb = static_cast<unsigned>(uint(1, "header key_bytes"));
    const unsigned vb = static_cast<unsigned>(uint(1, "header value_bytes"));
    if (kb != 4 && kb != 8) corrupt("key_bytes " + std::to_string(kb), "4 or 8", kat);
    if (vb != 4 && vb != 8) corrupt("value_bytes " + std::to_string(vb), "4 or 8", kat + 1);
    const uint64_t zat = offset_;
    if (uint(2, "header padding") != 0) corrupt("non-zero header padding", "zero", zat);
    const uint64_t vat = offset_;
    const uint64_t version = uint(4, "header version");
    if (version != kTraceVersion) corrupt("version " + std::to_string(version), "version 1", vat);
    h.seed = uint(8, "header seed");
    h.name = name("header name");
    h.key_type = kb == 8 ? KeyType::U64 : KeyType::U32;
    h.value_type = vb == 8 ? KeyType::U64 : KeyType::U32;
    return h;
  }

  // Reads a BATCH record's fields up to and including n; checks n against the file.
  void batch_head(ExecMode& mode, std::string& snapshot, uint64_t& n, unsigned key_bytes) {
    const uint64_t mat = offset_;
    const uint64_t m = uint(1, "BATCH mode");
    if (m > 1) corrupt("BATCH mode " + std::to_string(m), "0 phased or 1 concurrent", mat);
    mode = static_cast<ExecMode>(m);
    const uint64_t zat = offset_;
    if (uint(2, "BATCH padding") != 0 || uint(1, "BATCH padding") != 0)
      corrupt("non-zero BATCH padding", "zero", zat);
    snapshot = name("BATCH snapshot name");
    const uint64_t nat = offset_;
    n = uint(8, "BATCH operation count");
    const uint64_t per_op = 1 + key_bytes + 8;
    if (n > remaining() / per_op)
      truncated("BATCH of " + std::to_string(n) + " operations (" + std::to_string(n) + " x " +
                    std::to_string(per_op) + " bytes)",
                n > (~0ull / per_op) ? ~0ull : n * per_op);
    if (n > 0xFFFFFFFFull) corrupt("BATCH of " + std::to_string(n) + " operations", "at most 2^32 - 1", nat);
  }

 private:
  std::string path_;
  std::ifstream in_;
  uint64_t size_ = 0;
  uint64_t offset_ = 0;
  std::vector<unsigned char> buf_;
};

std::string tag_str(uint32_t tag) {
  char b[16];
  std::snprintf(b, sizeof b, "0x%08X", tag);
  return b;
}

}  // namespace

bool is_trace_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  char magic[8];
  in.read(magic, 8);
  return in.gcount() == 8 && std::memcmp(magic, kTraceMagic, 8) == 0;
}

// ---------------------------------------------------------------- writer

TraceWriter::TraceWriter(const std::string& path, const WorkloadHeader& header)
    : path_(path), out_(path, std::ios::binary | std::ios::trunc) {
  if (!out_) throw InputError(path + ": cannot create: " + std::strerror(errno) + " (a writable path)");
  key_bytes_ = width_bytes(header.key_type);
  value_bytes_ = width_bytes(header.value_type);
  put(kTraceMagic, 8);
  put_u8(static_cast<uint8_t>(key_bytes_));
  put_u8(static_cast<uint8_t>(value_bytes_));
  put_uint(0, 2);
  put_uint(kTraceVersion, 4);
  put_uint(header.seed, 8);
  put_name(header.name);
}

TraceWriter::~TraceWriter() = default;

void TraceWriter::put(const void* p, size_t n) {
  out_.write(static_cast<const char*>(p), static_cast<std::streamsize>(n));
  if (!out_) throw RuntimeFailure(path_ + ": write failed");
}

void TraceWriter::put_uint(uint64_t v, unsigned width) {
  unsigned char b[8];
  store_le(b, v, width);
  put(b, width);
}

void TraceWriter::put_name(const std::string& s) {
  if (s.size() > kMaxName) throw InputError(path_ + ": name '" + s.substr(0, 40) + "...' is longer than 65536 bytes");
  put_uint(s.size(), 4);
  put(s.data(), s.size());
}

void TraceWriter::put_array(const std::vector<uint64_t>& v, unsigned width) {
  const size_t per = kChunk / width;
  for (size_t done = 0; done < v.size();) {
    const size_t k = std::min(per, v.size() - done);
    buf_.resize(k * width);
    for (size_t i = 0; i < k; ++i) store_le(buf_.data() + i * width, v[done + i], width);
    put(buf_.data(), buf_.size());
    done += k;
  }
}

void TraceWriter::write(const Step& step) {
  switch (step.kind) {
    case StepKind::Initial:
      put_uint(kTraceInitial, 4);
      put_uint(step.initial.keys.size(), 8);
      put_array(step.initial.keys, key_bytes_);
      put_array(step.initial.values, value_bytes_);
      break;
    case StepKind::Phase:
      put_uint(kTracePhase, 4);
      put_name(step.name);
      break;
    case StepKind::Batch: {
      const Batch& b = step.batch;
      put_uint(kTraceBatch, 4);
      put_u8(static_cast<uint8_t>(b.mode));
      put_uint(0, 3);
      put_name(b.snapshot);
      put_uint(b.size(), 8);
      static_assert(sizeof(OpType) == 1, "OpType is one byte");
      put(b.types.data(), b.types.size());
      put_array(b.keys, key_bytes_);
      put_array(b.args, 8);
      break;
    }
    case StepKind::Snapshot:
      put_uint(kTraceSnapshot, 4);
      put_name(step.name);
      break;
    case StepKind::DropSnapshot:
      put_uint(kTraceDropSnapshot, 4);
      put_name(step.name);
      break;
    case StepKind::Cleanup:
      put_uint(kTraceCleanup, 4);
      break;
  }
}

void TraceWriter::finish() {
  if (finished_) return;
  put_uint(kTraceEnd, 4);
  out_.close();
  if (!out_) throw RuntimeFailure(path_ + ": write failed");
  finished_ = true;
}

// ---------------------------------------------------------------- reader

struct TraceSource::Impl {
  TraceReader r;
  WorkloadHeader header;
  bool started = false, done = false, in_phase = false;
  bool have_tag = false;
  uint32_t pending_tag = 0;
  uint64_t pending_at = 0;
  std::set<std::string> live;
  std::vector<uint8_t> types;

  explicit Impl(const std::string& path) : r(path) { header = r.header(); }

  void read_tag(uint32_t& tag, uint64_t& at) {
    if (have_tag) {
      have_tag = false;
      tag = pending_tag;
      at = pending_at;
      return;
    }
    at = r.offset();
    if (r.at_end()) r.truncated("missing END record", 4);
    tag = static_cast<uint32_t>(r.uint(4, "record tag"));
  }

  void read_initial(KeyValues& kv) {
    const unsigned kb = width_bytes(header.key_type), vb = width_bytes(header.value_type);
    const uint64_t n = r.uint(8, "INITIAL count");
    if (n > r.remaining() / (kb + vb))
      r.truncated("INITIAL of " + std::to_string(n) + " keys", n > ~0ull / (kb + vb) ? ~0ull : n * (kb + vb));
    r.array(n, kb, kv.keys, "INITIAL keys");
    r.array(n, vb, kv.values, "INITIAL values");
  }

  void read_batch(Batch& b, uint64_t at) {
    const unsigned kb = width_bytes(header.key_type);
    uint64_t n = 0;
    r.batch_head(b.mode, b.snapshot, n, kb);
    if (!in_phase) r.corrupt("BATCH record before any PHASE record", "a PHASE record opens each phase", at);
    if (!b.snapshot.empty() && !live.count(b.snapshot))
      r.corrupt("BATCH queries snapshot '" + b.snapshot + "', which is not live", "a snapshot created earlier", at);
    const uint64_t tat = r.offset();
    r.bytes(n, types, "BATCH types");
    b.types.resize(n);
    for (uint64_t i = 0; i < n; ++i) {
      if (types[i] >= kNumOpTypes)
        r.corrupt("operation type " + std::to_string(types[i]),
                  "0..7 (insert, delete, lookup, count, range, successor, vertex_delete, triangles)", tat + i);
      b.types[i] = static_cast<OpType>(types[i]);
    }
    r.array(n, kb, b.keys, "BATCH keys");
    const uint64_t aat = r.offset();
    r.array(n, 8, b.args, "BATCH args");
    const uint64_t key_max = max_of(header.key_type), value_max = max_of(header.value_type);
    for (uint64_t i = 0; i < n; ++i) {
      const OpType t = b.types[i];
      const uint64_t limit = t == OpType::Insert ? value_max : (t == OpType::Count || t == OpType::Range) ? key_max : 0;
      if (b.args[i] > limit)
        r.corrupt(std::string(op_name(t)) + " argument " + std::to_string(b.args[i]),
                  "at most " + std::to_string(limit), aat + 8 * i);
    }
  }

  bool next(Step& s) {
    s.clear();
    if (done) return false;
    uint32_t tag;
    uint64_t at;
    if (!started) {
      started = true;
      s.kind = StepKind::Initial;
      read_tag(tag, at);
      if (tag == kTraceInitial) {
        read_initial(s.initial);
      } else {
        have_tag = true;
        pending_tag = tag;
        pending_at = at;
      }
      return true;
    }
    read_tag(tag, at);
    switch (tag) {
      case kTraceInitial:
        r.corrupt("INITIAL record after the first record", "INITIAL only as the first record", at);
      case kTracePhase:
        s.kind = StepKind::Phase;
        s.name = r.name("PHASE name");
        in_phase = true;
        return true;
      case kTraceBatch:
        s.kind = StepKind::Batch;
        read_batch(s.batch, at);
        return true;
      case kTraceSnapshot:
        s.kind = StepKind::Snapshot;
        s.name = r.name("SNAPSHOT name");
        if (!live.insert(s.name).second)
          r.corrupt("SNAPSHOT '" + s.name + "' already exists", "names unique among live snapshots", at);
        return true;
      case kTraceDropSnapshot:
        s.kind = StepKind::DropSnapshot;
        s.name = r.name("DROP_SNAPSHOT name");
        if (!live.erase(s.name)) r.corrupt("DROP_SNAPSHOT '" + s.name + "' is not live", "a live snapshot", at);
        return true;
      case kTraceCleanup:
        s.kind = StepKind::Cleanup;
        s.name = "cleanup";
        return true;
      case kTraceEnd:
        if (!r.at_end())
          r.corrupt(std::to_string(r.remaining()) + " bytes after the END record", "END is the last record", r.offset());
        done = true;
        return false;
      default:
        r.corrupt("unknown record tag " + tag_str(tag), "1..6 or 0xFFFFFFFF", at);
    }
  }
};

TraceSource::TraceSource(const std::string& path) : impl_(std::make_unique<Impl>(path)) {}
TraceSource::~TraceSource() = default;
const WorkloadHeader& TraceSource::header() const { return impl_->header; }
bool TraceSource::next(Step& step) { return impl_->next(step); }

WorkloadSummary summarize_trace(const std::string& path) {
  TraceReader r(path);
  const WorkloadHeader h = r.header();
  const unsigned kb = width_bytes(h.key_type), vb = width_bytes(h.value_type);
  WorkloadSummary s;
  std::set<std::string> live;
  std::vector<uint8_t> types;
  uint64_t inserts = 0;
  bool first = true;
  for (;;) {
    const uint64_t at = r.offset();
    if (r.at_end()) r.truncated("missing END record", 4);
    const uint32_t tag = static_cast<uint32_t>(r.uint(4, "record tag"));
    const bool was_first = first;
    first = false;
    switch (tag) {
      case kTraceInitial: {
        if (!was_first) r.corrupt("INITIAL record after the first record", "INITIAL only as the first record", at);
        const uint64_t n = r.uint(8, "INITIAL count");
        if (n > r.remaining() / (kb + vb))
          r.truncated("INITIAL of " + std::to_string(n) + " keys", n > ~0ull / (kb + vb) ? ~0ull : n * (kb + vb));
        r.skip(n * (kb + vb), "INITIAL keys and values");
        s.initial = n;
        break;
      }
      case kTracePhase: {
        PhaseSummary p;
        p.name = r.name("PHASE name");
        s.phases.push_back(p);
        break;
      }
      case kTraceBatch: {
        ExecMode mode;
        std::string snap;
        uint64_t n = 0;
        r.batch_head(mode, snap, n, kb);
        if (s.phases.empty()) r.corrupt("BATCH record before any PHASE record", "a PHASE record opens each phase", at);
        if (!snap.empty() && !live.count(snap))
          r.corrupt("BATCH queries snapshot '" + snap + "', which is not live", "a snapshot created earlier", at);
        const uint64_t tat = r.offset();
        r.bytes(n, types, "BATCH types");
        PhaseSummary& p = s.phases.back();
        if (p.batches == 0) {
          p.mode = mode;
          p.snapshot = snap;
        }
        std::array<uint64_t, kNumOpTypes> c{};
        for (uint64_t i = 0; i < n; ++i) {
          if (types[i] >= kNumOpTypes) r.corrupt("operation type " + std::to_string(types[i]), "0..7", tat + i);
          ++c[types[i]];
        }
        r.skip(n * (kb + 8), "BATCH keys and args");
        ++p.batches;
        p.max_batch = std::max(p.max_batch, n);
        for (int t = 0; t < kNumOpTypes; ++t) {
          p.ops[t] += c[t];
          s.ops[t] += c[t];
        }
        inserts += c[static_cast<int>(OpType::Insert)];
        ++s.batches;
        s.bounds.max_batch = std::max(s.bounds.max_batch, n);
        s.bounds.max_queries = std::max(
            s.bounds.max_queries, n - c[static_cast<int>(OpType::Insert)] - c[static_cast<int>(OpType::Delete)]);
        break;
      }
      case kTraceSnapshot: {
        const std::string name = r.name("SNAPSHOT name");
        if (!live.insert(name).second)
          r.corrupt("SNAPSHOT '" + name + "' already exists", "names unique among live snapshots", at);
        s.snapshot_steps.push_back("snapshot " + name);
        s.bounds.max_snapshots = std::max<uint64_t>(s.bounds.max_snapshots, live.size());
        break;
      }
      case kTraceDropSnapshot: {
        const std::string name = r.name("DROP_SNAPSHOT name");
        if (!live.erase(name)) r.corrupt("DROP_SNAPSHOT '" + name + "' is not live", "a live snapshot", at);
        s.snapshot_steps.push_back("drop_snapshot " + name);
        break;
      }
      case kTraceCleanup:
        ++s.cleanups;
        break;
      case kTraceEnd:
        if (!r.at_end())
          r.corrupt(std::to_string(r.remaining()) + " bytes after the END record", "END is the last record", r.offset());
        set_resident_bounds(s.bounds, s.initial, inserts, h.key_type);
        return s;
      default:
        r.corrupt("unknown record tag " + tag_str(tag), "1..6 or 0xFFFFFFFF", at);
    }
  }
}

// ---------------------------------------------------------------- gen

namespace {

// gen's three files are written under temporary names in the output
// directory and renamed into place only when all are complete: a failed gen
// leaves the files already in the directory as they were, and a gen whose input is one of its own
// outputs (`gen D/trace.gdt -o D`) reads it whole before it is replaced.
class StagedOutputs {
 public:
  explicit StagedOutputs(const fs::path& dir) : dir_(dir), tag_(".tmp-" + std::to_string(::getpid())) {}
  ~StagedOutputs() {
    std::error_code ec;
    for (const auto& name : names_) fs::remove(temp(name), ec);
  }
  // The temporary path of the final file `name`.
  std::string stage(const std::string& name) {
    names_.push_back(name);
    return temp(name).string();
  }
  void commit() {
    for (const auto& name : names_) {
      std::error_code ec;
      fs::rename(temp(name), dir_ / name, ec);
      if (ec) throw RuntimeFailure((dir_ / name).string() + ": cannot write: " + ec.message());
    }
    names_.clear();
  }

 private:
  fs::path temp(const std::string& name) const { return dir_ / (name + tag_); }
  fs::path dir_;
  std::string tag_;
  std::vector<std::string> names_;
};

}  // namespace

void generate_to_directory(const std::string& yaml_path, const OpenOptions& opts, const std::string& out_dir) {
  std::unique_ptr<StepSource> src = open_workload(yaml_path, opts);
  std::error_code ec;
  fs::create_directories(out_dir, ec);
  if (ec || !fs::is_directory(out_dir))
    throw InputError(out_dir + ": cannot create directory" + (ec ? ": " + ec.message() : std::string()) +
                     " (a writable directory)");
  const fs::path dir(out_dir);
  const WorkloadHeader& h = src->header();
  StagedOutputs staged(dir);
  const std::string keys_path = staged.stage("initial_keys.bin");
  const std::string values_path = staged.stage("initial_values.bin");
  {
    TraceWriter w(staged.stage("trace.gdt"), h);
    Step step;
    while (src->next(step)) {
      if (step.kind == StepKind::Initial) {  // every source's first step, and only that
        write_raw_file(keys_path, step.initial.keys, width_bytes(h.key_type));
        write_raw_file(values_path, step.initial.values, width_bytes(h.value_type));
      }
      w.write(step);
    }
    w.finish();
  }
  staged.commit();
}

}  // namespace gpudict
