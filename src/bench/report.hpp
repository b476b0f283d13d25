// fluxjac — the printers of the result model (bench/run_record.hpp): a table for people, CSV and JSON for
// machines. The table and CSV columns are JSON keys of the record, listed once in report.cpp.
//
// The JSON layout is documented in docs/bench-json.md; `fluxjac compare` and scripts/plot_bench.py read it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "bench/device_probe.hpp"
#include "bench/run_record.hpp"

namespace fluxjac {

/// \brief Human-readable table (fmt) of the runs of one mesh; skipped and failed cases show their reason.
std::string format_table(const std::vector<RunRecord>& records);

/// \brief CSV with a header row, one row per case, build and device metadata repeated in every row.
std::string format_csv(const std::vector<RunRecord>& records, const std::optional<DeviceCeilings>& device);

/// \brief The JSON document of docs/bench-json.md (results_document), one run per line.
std::string format_json(const std::vector<RunRecord>& records, const std::optional<DeviceCeilings>& device);

}  // namespace fluxjac
