// Operation traces (docs/workload-format.md, "Operation trace"): the binary
// file `gpudict gen` writes and every structure can replay. Little-endian:
//   header:  "GPUDICT1", u8 key_bytes, u8 value_bytes, u16 0, u32 version = 1,
//            u64 seed, u32 name_len, name
//   records: u32 tag, then
//     1 INITIAL        u64 n, keys[n] (key width), values[n] (value width)
//     2 PHASE          u32 len, name
//     3 BATCH          u8 mode, u8 0[3], u32 snapshot_len, snapshot, u64 n,
//                      u8 types[n], keys[n] (key width), args[n] (u64)
//     4 SNAPSHOT       u32 len, name
//     5 DROP_SNAPSHOT  u32 len, name
//     0xFFFFFFFF END   (required; nothing may follow it)
#pragma once

#include <cstdint>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "workloads/workload.hpp"

namespace gpudict {

inline constexpr char kTraceMagic[9] = "GPUDICT1";
inline constexpr uint32_t kTraceVersion = 1;
enum TraceTag : uint32_t {
  kTraceInitial = 1,
  kTracePhase = 2,
  kTraceBatch = 3,
  kTraceSnapshot = 4,
  kTraceDropSnapshot = 5,
  kTraceCleanup = 6,
  kTraceEnd = 0xFFFFFFFFu,
};

// True if the file exists and starts with the trace magic.
bool is_trace_file(const std::string& path);

// Writes a trace step by step. InputError if the file cannot be created,
// RuntimeFailure if writing fails.
class TraceWriter {
 public:
  TraceWriter(const std::string& path, const WorkloadHeader& header);
  ~TraceWriter();
  TraceWriter(const TraceWriter&) = delete;
  TraceWriter& operator=(const TraceWriter&) = delete;

  void write(const Step& step);
  void finish();  // writes END and closes the file

 private:
  void put(const void* p, size_t n);
  void put_u8(uint8_t v) { put(&v, 1); }
  void put_uint(uint64_t v, unsigned width);
  void put_name(const std::string& s);
  void put_array(const std::vector<uint64_t>& v, unsigned width);

  std::string path_;
  std::ofstream out_;
  unsigned key_bytes_ = 4, value_bytes_ = 4;
  bool finished_ = false;
  std::vector<unsigned char> buf_;
};

// Reads a trace step by step, checking it as it goes: any short read is an
// InputError "truncated trace: FILE: ... at byte OFFSET"; corrupt fields
// (unknown tag, bad mode or type, a count larger than the rest of the file, a
// snapshot that is not live) are "corrupt trace: FILE: ... at byte OFFSET".
// A trace whose first record is not INITIAL starts with an empty Initial step.
class TraceSource : public StepSource {
 public:
  explicit TraceSource(const std::string& path);
  ~TraceSource() override;
  const WorkloadHeader& header() const override;
  bool next(Step& step) override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Counts from the record headers; bodies are skipped (only BATCH types are read).
WorkloadSummary summarize_trace(const std::string& path);

// `gpudict gen`: generates the workload at `yaml_path` (any workload file
// works) and writes, in `out_dir` (created if missing):
//   initial_keys.bin, initial_values.bin  raw little-endian, key/value width
//   trace.gdt                              the full trace, initial contents included
// Prints nothing. Replaying trace.gdt gives exactly the workload's steps.
void generate_to_directory(const std::string& yaml_path, const OpenOptions& opts, const std::string& out_dir);

}  // namespace gpudict
