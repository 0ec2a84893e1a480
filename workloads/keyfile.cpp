#include "workloads/keyfile.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <system_error>

#include "core/common/errors.hpp"
#include "workloads/rng.hpp"

namespace gpudict {

namespace fs = std::filesystem;

namespace {

constexpr size_t kChunkBytes = size_t{1} << 20;

[[noreturn]] void fail(const std::string& path, const std::string& what, const std::string& expected) {
  throw InputError(path + ": " + what + " (" + expected + ")");
}

std::ifstream open_in(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path, std::string("cannot open: ") + std::strerror(errno), "a readable file");
  return in;
}

// Reads `count` little-endian values of `width` bytes from `in` at its position.
void read_values(std::ifstream& in, const std::string& path, unsigned width, uint64_t count,
                 std::vector<uint64_t>& out) {
  out.resize(count);
  std::vector<unsigned char> buf;
  const uint64_t per_chunk = kChunkBytes / width;
  for (uint64_t done = 0; done < count;) {
    const uint64_t n = std::min<uint64_t>(per_chunk, count - done);
    buf.resize(n * width);
    in.read(reinterpret_cast<char*>(buf.data()), static_cast<std::streamsize>(buf.size()));
    if (static_cast<uint64_t>(in.gcount()) != buf.size())
      fail(path, "file ended early while reading value " + std::to_string(done + in.gcount() / width),
           std::to_string(count) + " values of " + std::to_string(width) + " bytes");
    for (uint64_t i = 0; i < n; ++i) out[done + i] = load_le(buf.data() + i * width, width);
    done += n;
  }
}

std::string file_name_of(const std::string& path) { return fs::path(path).filename().string(); }

}  // namespace

uint64_t file_size_or_throw(const std::string& path) {
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (st.type() == fs::file_type::not_found) fail(path, "no such file", "an existing file");
  if (ec) fail(path, "cannot access: " + ec.message(), "an existing, readable file");
  if (fs::is_directory(st)) fail(path, "is a directory", "a file");
  if (!fs::is_regular_file(st)) fail(path, "is not a regular file", "a file");
  // Opened here, so that an unreadable file is reported as one before its
  // contents are looked at (a file shorter than a SOSD header is never read).
  { std::ifstream probe = open_in(path); }
  const uintmax_t size = fs::file_size(path, ec);
  if (ec) fail(path, "cannot read its size: " + ec.message(), "a readable file");
  return static_cast<uint64_t>(size);
}

void require_keys(const KeyFileInfo& info, const std::string& expected) {
  if (info.count != 0) return;
  const std::string what = info.format == KeyFileFormat::Sosd
                               ? "empty key file: its SOSD header says 0 keys"
                               : "empty key file: " + std::to_string(info.file_size) + " bytes, no keys";
  fail(info.path, what, expected);
}

unsigned width_from_name(const std::string& path) {
  const std::string name = file_name_of(path);
  if (name.find("uint64") != std::string::npos) return 8;
  if (name.find("uint32") != std::string::npos) return 4;
  return 0;
}

KeyFileInfo probe_key_file(const std::string& path, KeyFileFormat format, unsigned forced_width,
                           unsigned raw_default_width) {
  KeyFileInfo info;
  info.path = path;
  info.file_size = file_size_or_throw(path);
  const uint64_t size = info.file_size;

  uint64_t header = 0;
  if (format != KeyFileFormat::Raw && size >= 8) {
    std::ifstream in = open_in(path);
    unsigned char b[8];
    in.read(reinterpret_cast<char*>(b), 8);
    if (in.gcount() != 8) fail(path, "cannot read the first 8 bytes", "a readable file");
    header = load_le(b, 8);
  }
  auto sosd_matches = [&](unsigned w) {
    if (forced_width != 0 && forced_width != w) return false;
    return size >= 8 && (size - 8) % w == 0 && (size - 8) / w == header;
  };
  auto set_sosd = [&](unsigned w) {
    info.format = KeyFileFormat::Sosd;
    info.width = w;
    info.count = header;
    info.offset = 8;
  };

  if (format != KeyFileFormat::Raw) {
    const bool m8 = sosd_matches(8), m4 = sosd_matches(4);
    if (m8 && m4) {  // only when the header says 0 keys and the file is 8 bytes long
      const unsigned by_name = width_from_name(path);
      set_sosd(by_name ? by_name : (raw_default_width ? raw_default_width : 4));
      return info;
    }
    if (m8) {
      set_sosd(8);
      return info;
    }
    if (m4) {
      set_sosd(4);
      return info;
    }
    if (format == KeyFileFormat::Sosd) {
      if (size < 8)
        fail(path, "truncated SOSD file: " + std::to_string(size) + " bytes, shorter than the 8-byte header",
             "a u64 key count, then the keys");
      const unsigned w = forced_width ? forced_width : width_from_name(path);
      const uint64_t body = size - 8;
      const uint64_t fits = body / (w ? w : 8);  // keys of the (default u64) width the body holds
      std::string holds;
      if (w) {
        holds = std::to_string(body / w) + " keys of " + std::to_string(w) + " bytes";
        if (body % w) holds += " and " + std::to_string(body % w) + " stray bytes";
      } else {
        holds = std::to_string(body / 8) + " u64 keys or " + std::to_string(body / 4) + " u32 keys";
        if (body % 4) holds += " and " + std::to_string(body % 4) + " stray bytes";
      }
      const std::string what = (header > fits ? "truncated SOSD file: header says " : "SOSD header says ") +
                               std::to_string(header) + " keys, file holds " + holds;
      fail(path, what, "size = 8 + count * width");
    }
  }

  const unsigned w = forced_width ? forced_width : (raw_default_width ? raw_default_width : 4);
  if (size % w != 0)
    fail(path,
         "size " + std::to_string(size) + " bytes is not a multiple of the key width " + std::to_string(w),
         "a raw array of " + std::to_string(w) + "-byte little-endian keys");
  info.format = KeyFileFormat::Raw;
  info.width = w;
  info.count = size / w;
  info.offset = 0;
  return info;
}

std::vector<uint64_t> read_key_file(const KeyFileInfo& info, uint64_t count, uint64_t key_max) {
  if (count > info.count)
    fail(info.path, "asked for " + std::to_string(count) + " keys, file holds " + std::to_string(info.count),
         "count <= " + std::to_string(info.count));
  // The file may have changed since it was probed.
  if (file_size_or_throw(info.path) != info.file_size)
    fail(info.path, "file changed while the workload was open", "an unchanging file");
  std::ifstream in = open_in(info.path);
  in.seekg(static_cast<std::streamoff>(info.offset));
  std::vector<uint64_t> keys;
  read_values(in, info.path, info.width, count, keys);
  if (key_max != ~0ull) {
    for (uint64_t i = 0; i < keys.size(); ++i)
      if (keys[i] > key_max)
        fail(info.path,
             "key " + std::to_string(keys[i]) + " at index " + std::to_string(i) + " is out of range for the key type",
             "keys <= " + std::to_string(key_max));
  }
  return keys;
}

std::vector<uint64_t> read_raw_values(const std::string& path, unsigned width, uint64_t count) {
  const uint64_t size = file_size_or_throw(path);
  if (size / width < count)
    fail(path, "holds " + std::to_string(size / width) + " values of " + std::to_string(width) + " bytes",
         "at least " + std::to_string(count) + " values");
  std::ifstream in = open_in(path);
  std::vector<uint64_t> values;
  read_values(in, path, width, count, values);
  return values;
}

namespace {
void write_values(std::ofstream& out, const std::string& path, const std::vector<uint64_t>& v, unsigned width) {
  std::vector<unsigned char> buf;
  const size_t per_chunk = kChunkBytes / width;
  for (size_t done = 0; done < v.size();) {
    const size_t n = std::min(per_chunk, v.size() - done);
    buf.resize(n * width);
    for (size_t i = 0; i < n; ++i) store_le(buf.data() + i * width, v[done + i], width);
    out.write(reinterpret_cast<const char*>(buf.data()), static_cast<std::streamsize>(buf.size()));
    done += n;
  }
  if (!out) throw RuntimeFailure(path + ": write failed");
}

std::ofstream open_out(const std::string& path) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) fail(path, std::string("cannot create: ") + std::strerror(errno), "a writable path");
  return out;
}
}  // namespace

void write_raw_file(const std::string& path, const std::vector<uint64_t>& values, unsigned width) {
  std::ofstream out = open_out(path);
  write_values(out, path, values, width);
  out.close();
  if (!out) throw RuntimeFailure(path + ": write failed");
}

void write_sosd_file(const std::string& path, const std::vector<uint64_t>& keys, unsigned width) {
  std::ofstream out = open_out(path);
  unsigned char h[8];
  store_le(h, keys.size(), 8);
  out.write(reinterpret_cast<const char*>(h), 8);
  write_values(out, path, keys, width);
  out.close();
  if (!out) throw RuntimeFailure(path + ": write failed");
}

// ---------------------------------------------------------------- key file as workload

namespace {

// An empty key file as the workload is refused: it would build nothing and
// look nothing up, and is far more often a failed download or a wrong path
// than an intent. A YAML workload can start from one on purpose.
KeyFileInfo probe_direct(const std::string& path) {
  const unsigned by_name = width_from_name(path);
  KeyFileInfo info = probe_key_file(path, KeyFileFormat::Auto, 0, by_name ? by_name : 4);
  require_keys(info, "at least one key; a YAML workload may start from an empty key file on purpose with "
                     "initial: {file: PATH, allow_empty: true}");
  return info;
}

// Holds no keys itself: the Initial step gets them all, and the lookup
// batches are read back from the file one batch at a time.
class KeyFileSource : public StepSource {
 public:
  KeyFileSource(const std::string& path, const OpenOptions& opts) : info_(probe_direct(path)) {
    header_.name = fs::path(path).stem().string();
    header_.path = path;
    header_.format = info_.format == KeyFileFormat::Sosd ? "keys-sosd" : "keys-raw";
    header_.key_type = info_.width == 8 ? KeyType::U64 : KeyType::U32;
    header_.value_type = header_.key_type;
    header_.seed = opts.has_seed_override ? opts.seed_override : 1;
  }

  const WorkloadHeader& header() const override { return header_; }

  bool next(Step& step) override {
    step.clear();
    if (state_ == 0) {
      step.kind = StepKind::Initial;
      step.initial.keys = read_key_file(info_, info_.count, max_of(header_.key_type));
      step.initial.values.resize(step.initial.keys.size());
      const uint64_t mask = max_of(header_.value_type);
      for (size_t i = 0; i < step.initial.keys.size(); ++i)
        step.initial.values[i] = splitmix64(step.initial.keys[i] ^ header_.seed) & mask;
      state_ = 1;
      return true;
    }
    if (state_ == 1) {
      step.kind = StepKind::Phase;
      step.name = "lookup-all";
      state_ = 2;
      in_ = open_in(info_.path);
      in_.seekg(static_cast<std::streamoff>(info_.offset));
      return true;
    }
    if (pos_ >= info_.count) return false;
    step.kind = StepKind::Batch;
    const uint64_t n = std::min<uint64_t>(kLookupAllBatch, info_.count - pos_);
    step.batch.types.assign(n, OpType::Lookup);
    read_values(in_, info_.path, info_.width, n, step.batch.keys);
    step.batch.args.assign(n, 0);
    pos_ += n;
    return true;
  }

 private:
  KeyFileInfo info_;
  WorkloadHeader header_;
  std::ifstream in_;
  int state_ = 0;
  uint64_t pos_ = 0;
};

}  // namespace

std::unique_ptr<StepSource> open_key_file_workload(const std::string& path, const OpenOptions& opts) {
  return std::make_unique<KeyFileSource>(path, opts);
}

WorkloadSummary lookup_all_summary(const std::string& phase, uint64_t keys, KeyType key_type) {
  WorkloadSummary s;
  s.initial = keys;
  PhaseSummary p;
  p.name = phase;
  p.batches = (keys + kLookupAllBatch - 1) / kLookupAllBatch;
  p.max_batch = std::min(keys, kLookupAllBatch);
  p.ops[static_cast<int>(OpType::Lookup)] = keys;
  s.phases.push_back(p);
  s.ops = p.ops;
  s.batches = p.batches;
  set_resident_bounds(s.bounds, keys, 0, key_type);
  s.bounds.max_batch = p.max_batch;
  s.bounds.max_queries = p.max_batch;
  s.bounds.max_snapshots = 0;
  return s;
}

WorkloadSummary summarize_key_file_workload(const std::string& path, const OpenOptions&) {
  const KeyFileInfo info = probe_direct(path);
  return lookup_all_summary("lookup-all", info.count, info.width == 8 ? KeyType::U64 : KeyType::U32);
}

}  // namespace gpudict
