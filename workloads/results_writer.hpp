// `--results FILE`: every query result as tab-separated text, one line per
// query (docs/output-formats.md documents the columns).
#pragma once

#include <cstdio>
#include <string>

#include "workloads/batch.hpp"

namespace gpudict {

class ResultsWriter {
 public:
  // "-" writes to stdout; `comment`: a first line "# gpudict results v1"
  // before the column header.
  explicit ResultsWriter(const std::string& path, bool comment = false);
  ~ResultsWriter();
  ResultsWriter(const ResultsWriter&) = delete;
  ResultsWriter& operator=(const ResultsWriter&) = delete;

  void write_batch(uint64_t batch_index, const Batch& batch, const BatchResults& r);
  // After the last batch: flushes and closes, and throws RuntimeFailure
  // (exit 3) if any of the results could not be written.
  void finish();

 private:
  std::FILE* f_ = nullptr;
  bool owned_ = false;
  std::string what_;  // "--results PATH" or "--results to standard output", for the errors
};

}  // namespace gpudict
