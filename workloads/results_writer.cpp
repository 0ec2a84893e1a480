#include "workloads/results_writer.hpp"

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "core/common/errors.hpp"
#include "core/common/output_file.hpp"

namespace gpudict {

ResultsWriter::ResultsWriter(const std::string& path, bool comment)
    : what_(path == "-" ? "--results to standard output" : "--results " + path) {
  if (path == "-") {
    f_ = stdout;
  } else {
    f_ = open_output_file(path, "results");
    owned_ = true;
  }
  // The column header first, so that TSV and CSV readers take it as the
  // header; the version line only when asked for.
  if (comment) std::fputs("# gpudict results v1\n", f_);
  std::fputs("batch\top\ttype\tkey\targ\tfound\tvalue\tresult_key\tpairs\n", f_);
}

ResultsWriter::~ResultsWriter() {
  if (owned_ && f_) std::fclose(f_);  // (an error path: finish() reports write errors)
}

void ResultsWriter::finish() {
  if (!owned_) {
    finish_output(f_, what_);
    return;
  }
  std::FILE* f = f_;
  f_ = nullptr;  // closed below whatever happens
  close_output(f, what_);
}

void ResultsWriter::write_batch(uint64_t batch_index, const Batch& b, const BatchResults& r) {
  fmt::memory_buffer out;
  for (size_t i = 0; i < b.size(); ++i) {
    OpType t = b.types[i];
    if (!is_query(t)) continue;
    fmt::format_to(std::back_inserter(out), "{}\t{}\t{}\t{}\t{}\t", batch_index, i, op_name(t), b.keys[i], b.args[i]);
    switch (t) {
      case OpType::Lookup:
        if (r.found[i])
          fmt::format_to(std::back_inserter(out), "1\t{}\t\t", r.value[i]);
        else
          fmt::format_to(std::back_inserter(out), "0\t\t\t");
        break;
      case OpType::Count:
      case OpType::Triangles: fmt::format_to(std::back_inserter(out), "\t{}\t\t", r.value[i]); break;
      case OpType::Successor:
        if (r.found[i])
          fmt::format_to(std::back_inserter(out), "1\t{}\t{}\t", r.value[i], r.key[i]);
        else
          fmt::format_to(std::back_inserter(out), "0\t\t\t");
        break;
      case OpType::Range: {
        fmt::format_to(std::back_inserter(out), "\t{}\t\t", r.value[i]);
        uint64_t off = r.key[i], n = r.value[i];
        for (uint64_t j = 0; j < n && off + j < r.range_keys.size(); ++j)
          fmt::format_to(std::back_inserter(out), "{}{}:{}", j ? "," : "", r.range_keys[off + j],
                         r.range_values[off + j]);
        break;
      }
      default: break;
    }
    out.push_back('\n');
  }
  if (std::fwrite(out.data(), 1, out.size(), f_) != out.size())
    throw RuntimeFailure("cannot write " + what_ + ": " + std::strerror(errno));
}

}  // namespace gpudict
