// Binary key files (docs/workload-format.md, "Key files"): raw little-endian
// u32/u64 arrays and SOSD files (a u64 count, then the keys), with the
// auto-detection rule; and a key file given directly as the workload.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "workloads/workload.hpp"

namespace gpudict {

enum class KeyFileFormat : uint8_t { Auto = 0, Raw, Sosd };

// What probing a key file found. Only the header is read.
struct KeyFileInfo {
  std::string path;
  KeyFileFormat format = KeyFileFormat::Raw;  // resolved: Raw or Sosd
  unsigned width = 4;                         // bytes per key: 4 or 8
  uint64_t count = 0;                         // keys the file holds
  uint64_t offset = 0;                        // byte offset of the first key (0 raw, 8 SOSD)
  uint64_t file_size = 0;
};

// 8 if the file's name (not its directory) contains "uint64", 4 if it contains
// "uint32", else 0.
unsigned width_from_name(const std::string& path);

// Resolves the format and width of `path` and counts its keys.
//   format Auto: SOSD if size >= 8 and the first u64 h satisfies 8 + 8h == size
//     (SOSD u64) or 8 + 4h == size (SOSD u32); when both match (h = 0) the
//     file name decides (width_from_name, else raw_default_width); otherwise raw.
//   format Sosd: as Auto's SOSD rule; no match is a truncated SOSD file.
//   format Raw: raw.
// `forced_width` (0: none) fixes the width: with Auto only a SOSD header of
// that width is recognised. Raw files use forced_width, else
// raw_default_width; their size must be a multiple of the width.
// Throws InputError("PATH: what (expected)") for missing, unreadable or
// malformed files.
KeyFileInfo probe_key_file(const std::string& path, KeyFileFormat format, unsigned forced_width,
                           unsigned raw_default_width);

// The first `count` keys (count <= info.count) of a probed file. Keys are
// checked against `key_max` (InputError naming the file and the key's index).
std::vector<uint64_t> read_key_file(const KeyFileInfo& info, uint64_t count, uint64_t key_max);

// Size in bytes of a file; InputError("PATH: what (expected)") if it is
// missing, a directory or cannot be opened for reading.
uint64_t file_size_or_throw(const std::string& path);

// InputError("PATH: empty key file: ... (expected)") when the probed file
// holds no keys (a raw file of 0 bytes, a SOSD header with count 0).
void require_keys(const KeyFileInfo& info, const std::string& expected);

// The first `count` values of a raw little-endian file of `width`-byte values.
std::vector<uint64_t> read_raw_values(const std::string& path, unsigned width, uint64_t count);

// Writers (used by `gpudict gen`, the tests and the example data). Values are
// truncated to `width` bytes. InputError if the file cannot be created.
void write_raw_file(const std::string& path, const std::vector<uint64_t>& values, unsigned width);
void write_sosd_file(const std::string& path, const std::vector<uint64_t>& keys, unsigned width);

// A key file given as the workload: initial contents = its keys (value of key
// k: splitmix64(k ^ seed) masked to the value width; seed 1 unless
// overridden), then one phase "lookup-all" of lookups of every key in file
// order, in batches of at most kLookupAllBatch.
inline constexpr uint64_t kLookupAllBatch = 1ull << 20;
// The summary of a file given as the workload: `keys` keys built, then one
// phase named `phase` looking each up, in batches of kLookupAllBatch (key
// files, graph files).
WorkloadSummary lookup_all_summary(const std::string& phase, uint64_t keys, KeyType key_type);
std::unique_ptr<StepSource> open_key_file_workload(const std::string& path, const OpenOptions& opts);
WorkloadSummary summarize_key_file_workload(const std::string& path, const OpenOptions& opts);

// ---- little-endian helpers shared by the binary formats

inline uint64_t load_le(const unsigned char* p, unsigned width) {
  uint64_t v = 0;
  for (unsigned i = 0; i < width; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}
inline void store_le(unsigned char* p, uint64_t v, unsigned width) {
  for (unsigned i = 0; i < width; ++i) p[i] = static_cast<unsigned char>(v >> (8 * i));
}

}  // namespace gpudict
