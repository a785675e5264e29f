#include <rodsim/run_record/summary.h>

#include <fmt/format.h>

namespace rodsim::run_record {

std::string summaryText(const Summary& s) {
  std::string plugins, contact_report, force_report;
  for (const auto& [type, lib] : s.plugins)
    plugins += fmt::format("{}{}: {}", plugins.empty() ? "" : ", ", jsonString(type), jsonString(lib));
  for (const auto& [column, mean] : s.contact_report)
    contact_report += fmt::format("{}{}: {}", contact_report.empty() ? "" : ", ", jsonString(column), jsonNumber(mean));
  for (const auto& [column, mean] : s.force_report)
    force_report += fmt::format("{}{}: {}", force_report.empty() ? "" : ", ", jsonString(column), jsonNumber(mean));
  return fmt::format(
      "{{\n"
      "  \"name\": {},\n  \"scene\": {},\n  \"status\": {},\n  \"reason\": {},\n"
      "  \"run_id\": {},\n  \"identity\": {},\n"
      "  \"steps\": {},\n  \"sim_time\": {},\n  \"wall_time_s\": {},\n"
      "  \"newton_iterations\": {},\n  \"aipts\": {},\n  \"step_cuts\": {},\n  \"steps_cut_for_crossing\": {},\n"
      "  \"steps_with_contact\": {},\n  \"contact_iterations\": {},\n  \"aipts_contact\": {},\n"
      "  \"atpts_ms\": {},\n  \"contact_wall_s\": {},\n  \"atpts_contact_ms\": {},\n  \"min_gap\": {},\n"
      "  \"iterations_are\": \"linear solves (Newton iterations) per step\",\n"
      "  \"contact_report\": {{{}}},\n  \"force_report\": {{{}}},\n  \"plugins\": {{{}}},\n"
      "  \"version\": {}\n}}\n",
      jsonString(s.name), jsonString(s.scene), jsonString(s.status), jsonString(s.reason), jsonString(s.run_id),
      jsonString(s.identity), s.steps, jsonNumber(s.sim_time), jsonNumber(s.wall_time_s), s.newton_iterations,
      jsonNumber(s.aipts), s.step_cuts, s.steps_cut_for_crossing, s.steps_with_contact, s.contact_iterations,
      jsonNumber(s.aipts_contact), jsonNumber(s.atpts_ms), jsonNumber(s.contact_wall_s), jsonNumber(s.atpts_contact_ms),
      jsonNumber(s.min_gap), contact_report, force_report, plugins, jsonString(s.version));
}

JsonValue readSummaryFile(const std::filesystem::path& file, std::uint64_t max_bytes) {
  std::error_code ec;
  const std::filesystem::path f = std::filesystem::is_directory(file, ec) ? file / "summary.json" : file;
  JsonValue v = readJsonFile(f.string(), max_bytes, "summary.json");
  if (!v.isObject()) throw FormatError(fmt::format("{}: not a JSON object", f.string()));
  return v;
}

}  // namespace rodsim::run_record
