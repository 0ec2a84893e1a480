// Printing a RunReport: text (aligned table), json (JSON Lines: one object per
// line), csv (header row). Field names are documented in docs/output-formats.md
// and are stable.
#pragma once

#include <cstdio>
#include <string>

#include "core/common/output_file.hpp"  // finish_output: every command ends its outputs with it
#include "workloads/replay.hpp"

namespace gpudict {

enum class OutputFormat { Text, Json, Csv };

// quiet: text prints the verdict line alone, json the summary record alone;
// csv has no quiet form (refused before the run).
void print_report(std::FILE* out, const RunReport& rep, OutputFormat fmt, bool quiet);
// The first mismatches and their number, on `err` (stderr).
void print_mismatches(std::FILE* err, const RunReport& rep);
std::string json_escape(const std::string& s);
// `s` as a JSON string (quoted, escaped) and as a CSV field (quoted where it
// holds a comma, a quote or a line break, RFC 4180).
std::string json_string(const std::string& s);
std::string csv_field(const std::string& s);
// The provenance as the text report's `run:` line (without it) and as the
// JSON run record's "provenance" object.
std::string provenance_text(const Provenance& p);
std::string provenance_json(const Provenance& p);
// ops per device ms, in millions per second.
double mops(uint64_t ops, double ms);
// --batch-times FILE: one CSV row per batch (docs/output-formats.md), to `f`,
// opened before the run (so that a bad path fails before the work); the
// caller closes it with close_output.
void write_batch_times(std::FILE* f, const RunReport& rep);

}  // namespace gpudict
