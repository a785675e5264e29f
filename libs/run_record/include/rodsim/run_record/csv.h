// The CSV files of a run (timeseries.csv, final.csv: a header line, then rows of numbers or
// empty cells; final.csv's first column names the rod) and the CSV files a user gives in their
// layout (`rodsim fit` data): read as a table, and written row by row as the kernel writes them.
#pragma once

#include <rodsim/run_record/json.h>  // FormatError

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rodsim::run_record {

// Bounds of the run's CSV files (rows of up to a few thousand probes) and of summary.json.
inline constexpr std::uint64_t kMaxRunCsvBytes = std::uint64_t(256) << 20;
inline constexpr std::size_t kMaxCsvLine = std::size_t(1) << 20;
inline constexpr std::uint64_t kMaxSummaryBytes = std::uint64_t(16) << 20;

struct CsvTable {
  std::string file;                             // names the table in errors
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;   // cells as written (no quoting: rodsim writes none)
  std::vector<std::size_t> lines;               // the line (1-based) of each row in the file

  // The index of a header column, -1 when absent.
  long column(std::string_view name) const;
  // Row `row`, column `col` as a number: NaN for an empty or missing cell; FormatError
  // "FILE:LINE: column NAME: 'x' is not a number" otherwise.
  double number(std::size_t row, std::size_t col) const;
  // A whole column by name as numbers (FormatError when absent or a cell is no number).
  std::vector<double> numbers(std::string_view name) const;
};

// Parses CSV text: the first line is the header; empty lines are skipped, a trailing \r dropped.
// `same_width`: a row with another number of cells than the header is a FormatError
// ("FILE:LINE: N cell(s), the header has M"); a line longer than `max_line` bytes is one too.
CsvTable parseCsv(std::string_view text, const std::string& file, bool same_width = true,
                  std::size_t max_line = kMaxCsvLine);
// A CSV file of at most `max_bytes` (a regular file), parsed; `what` names it when it cannot be read.
CsvTable readCsvFile(const std::filesystem::path& file, std::uint64_t max_bytes, const std::string& what,
                     bool same_width = true, std::size_t max_line = kMaxCsvLine);

// A cell as a number: NaN for an empty cell; false when it is not one number from end to end.
bool parseCell(std::string_view cell, double& value);

// The simulated time of the last whole row of a timeseries.csv being written (progress display):
// reads its last 512 bytes only; 0 when there is none or the file is no regular file.
double lastTime(const std::filesystem::path& timeseries);

// The header and the first `rows` rows of a timeseries.csv as text, when there are that many and
// the last of them is of step `last_step`; nullopt otherwise (`rodsim run --restart` keeps the rows
// up to its checkpoint). Read line by line: the file may be longer than any bound above.
std::optional<std::string> timeseriesRowsUpTo(const std::filesystem::path& timeseries, long long rows, long long last_step);

// ---- writing, as the kernel writes (outputs are byte-identical from run to run)

// timeseries.csv's header line (with '\n'): the fixed columns, then one per probe.
std::string timeseriesHeader(const std::vector<std::string>& probe_names);
// One timeseries.csv row (with '\n') appended to `out`.
void appendTimeseriesRow(std::string& out, long long step, double t, int iterations, double wall_ms, int contacts,
                         double min_gap, double kinetic, double elastic, const std::vector<double>& probes);
// A number as the kernel writes it in timeseries.csv: the shortest of %.10g (std::to_chars,
// identical bytes), nothing for a value that is not finite (an empty cell).
void appendCsvNumber(std::string& out, double v);

// final.csv's header line and one row (node positions with 17 significant digits: exact doubles).
inline constexpr std::string_view kFinalHeader = "rod,node,x,y,z\n";
void appendFinalRow(std::string& out, std::string_view rod, int node, double x, double y, double z);

// vtk/obstacles.csv (the scene's fixed geometry, for `rodsim render`): its header line and one row
// per obstacle (numbers as the shortest text that reads back as the same double: -0.2, not
// -0.20000000000000001). Read back with parseCsv (9 cells a row).
inline constexpr std::string_view kObstaclesHeader = "name,shape,x,y,z,nx,ny,nz,radius\n";
void appendObstacleRow(std::string& out, std::string_view name, std::string_view shape, double x, double y, double z,
                       double nx, double ny, double nz, double radius);

}  // namespace rodsim::run_record
