// summary.json: what a run reports when it ends (and while it runs: status "running"). Its keys
// are listed in docs/scene-format.md ("Output"). Written here from the values the kernel
// gathered; read with readSummaryFile (a JsonValue: summary.find("status"), .text("reason")).
#pragma once

#include <rodsim/run_record/csv.h>   // kMaxSummaryBytes
#include <rodsim/run_record/json.h>

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace rodsim::run_record {

struct Summary {
  std::string name, scene, status, reason, run_id, identity;
  long long steps = 0;
  double sim_time = 0, wall_time_s = 0;
  long long newton_iterations = 0;
  double aipts = 0;  // Newton iterations per step
  long long step_cuts = 0, steps_cut_for_crossing = 0, steps_with_contact = 0, contact_iterations = 0;
  double aipts_contact = 0, atpts_ms = 0, contact_wall_s = 0, atpts_contact_ms = 0, min_gap = 0;
  std::vector<std::pair<std::string, double>> contact_report, force_report;  // column, mean
  std::vector<std::pair<std::string, std::string>> plugins;                  // type, library
  std::string version;
};

// The text of summary.json (keys in the order above; numbers as jsonNumber writes them).
std::string summaryText(const Summary& s);

// DIR/summary.json (or the file itself), parsed: a regular file of at most `max_bytes`; FormatError
// naming it when it is not a JSON object.
JsonValue readSummaryFile(const std::filesystem::path& file, std::uint64_t max_bytes = kMaxSummaryBytes);

}  // namespace rodsim::run_record
