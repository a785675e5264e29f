#include <rodsim/run_record/csv.h>

#include <rodsim/user_files/bounded_read.h>

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <iterator>
#include <limits>

namespace rodsim::run_record {

namespace {

std::vector<std::string> splitCells(std::string_view line) {
  std::vector<std::string> cells;
  std::size_t begin = 0;
  for (;;) {
    const std::size_t comma = line.find(',', begin);
    cells.emplace_back(line.substr(begin, comma == std::string_view::npos ? std::string_view::npos : comma - begin));
    if (comma == std::string_view::npos) return cells;
    begin = comma + 1;
  }
}

}  // namespace

bool parseCell(std::string_view cell, double& value) {
  if (cell.empty()) {
    value = std::numeric_limits<double>::quiet_NaN();
    return true;
  }
  // What strtod reads, without a locale: a leading '+' as well, inf and nan (from_chars takes neither '+').
  const std::string_view body = cell.front() == '+' ? cell.substr(1) : cell;
  if (body.empty() || (body.front() == '-' && cell.front() == '+')) return false;
  const auto [end, ec] = std::from_chars(body.data(), body.data() + body.size(), value);
  if (end != body.data() + body.size()) return false;
  if (ec == std::errc::result_out_of_range) value = std::strtod(std::string(body).c_str(), nullptr);
  else if (ec != std::errc()) return false;
  return true;
}

long CsvTable::column(std::string_view name) const {
  const auto it = std::find(header.begin(), header.end(), name);
  return it == header.end() ? -1 : static_cast<long>(it - header.begin());
}

double CsvTable::number(std::size_t row, std::size_t col) const {
  const auto& cells = rows.at(row);
  if (col >= cells.size()) return std::numeric_limits<double>::quiet_NaN();
  double v = 0;
  if (!parseCell(cells[col], v))
    throw FormatError(fmt::format("{}:{}: column {}: '{}' is not a number", file, lines.at(row),
                                  col < header.size() ? header[col] : std::to_string(col + 1), cells[col]));
  return v;
}

std::vector<double> CsvTable::numbers(std::string_view name) const {
  const long c = column(name);
  if (c < 0) throw FormatError(fmt::format("{}: no column '{}'", file, name));
  std::vector<double> out;
  out.reserve(rows.size());
  for (std::size_t r = 0; r < rows.size(); ++r) out.push_back(number(r, static_cast<std::size_t>(c)));
  return out;
}

CsvTable parseCsv(std::string_view text, const std::string& file, bool same_width, std::size_t max_line) {
  CsvTable t;
  t.file = file;
  bool header = true;
  std::size_t line = 1;
  for (std::size_t begin = 0; begin < text.size(); ++line) {
    std::size_t end = text.find('\n', begin);
    if (end == std::string_view::npos) end = text.size();
    if (end - begin > max_line)
      throw FormatError(fmt::format("{}:{}: a line longer than {} bytes", file, line, max_line));
    std::string_view l = text.substr(begin, end - begin);
    begin = end + 1;
    if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
    if (l.empty()) continue;
    if (header) {
      t.header = splitCells(l);
      header = false;
      continue;
    }
    t.rows.push_back(splitCells(l));
    t.lines.push_back(line);
    if (same_width && t.rows.back().size() != t.header.size())
      throw FormatError(fmt::format("{}:{}: {} cell(s), the header has {}", file, line, t.rows.back().size(), t.header.size()));
  }
  return t;
}

CsvTable readCsvFile(const std::filesystem::path& file, std::uint64_t max_bytes, const std::string& what, bool same_width,
                     std::size_t max_line) {
  std::string text;
  try {
    text = user_files::readBoundedFile(file.string(), max_bytes, what);
  } catch (const user_files::BoundedReadError& e) {
    throw FormatError(e.what());
  }
  return parseCsv(text, file.string(), same_width, max_line);
}

double lastTime(const std::filesystem::path& file) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(file, ec)) return 0;  // a FIFO would wait for a writer
  std::ifstream in(file, std::ios::binary | std::ios::ate);
  if (!in) return 0;
  const std::streamoff size = in.tellg();
  const std::streamoff start = std::max<std::streamoff>(0, size - 512);
  in.seekg(start);
  std::string tail(static_cast<std::size_t>(size - start), '\0');
  in.read(tail.data(), static_cast<std::streamsize>(tail.size()));
  // The last whole row: the text before the last newline, after the one before it.
  const std::size_t end = tail.rfind('\n');
  if (end == std::string::npos || end == 0) return 0;
  const std::size_t newline = tail.rfind('\n', end - 1);
  if (newline == std::string::npos && start > 0) return 0;  // a row longer than the tail
  const std::string_view row = std::string_view(tail).substr(newline == std::string::npos ? 0 : newline + 1,
                                                              end - (newline == std::string::npos ? 0 : newline + 1));
  const auto cells = splitCells(row);
  double t = 0;
  return cells.size() > 1 && parseCell(cells[1], t) && std::isfinite(t) ? t : 0;
}

std::optional<std::string> timeseriesRowsUpTo(const std::filesystem::path& file, long long rows, long long last_step) {
  std::ifstream in(file, std::ios::binary);
  std::string text, line;
  const long long lines = rows + 1;
  long long read = 0;
  for (; read < lines && std::getline(in, line); ++read) text += line + "\n";
  if (read < lines || line.rfind(std::to_string(last_step) + ",", 0) != 0) return std::nullopt;
  return text;
}

std::string timeseriesHeader(const std::vector<std::string>& probe_names) {
  std::string h = "step,t,iterations,wall_ms,contacts,min_gap,kinetic_energy,elastic_energy";
  for (const auto& p : probe_names) {
    h += ',';
    h += p;
  }
  return h + '\n';
}

void appendCsvNumber(std::string& out, double v) {
  if (!std::isfinite(v)) return;
  char buf[32];
  const auto end = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::general, 10).ptr;
  out.append(buf, end);
}

void appendTimeseriesRow(std::string& out, long long step, double t, int iterations, double wall_ms, int contacts,
                         double min_gap, double kinetic, double elastic, const std::vector<double>& probes) {
  auto it = std::back_inserter(out);
  fmt::format_to(it, "{},", step);
  appendCsvNumber(out, t);
  fmt::format_to(it, ",{},{:.4f},{},", iterations, wall_ms, contacts);
  appendCsvNumber(out, min_gap);
  out += ',';
  appendCsvNumber(out, kinetic);
  out += ',';
  appendCsvNumber(out, elastic);
  for (double p : probes) {
    out += ',';
    appendCsvNumber(out, p);
  }
  out += '\n';
}

void appendFinalRow(std::string& out, std::string_view rod, int node, double x, double y, double z) {
  fmt::format_to(std::back_inserter(out), "{},{},{:.17g},{:.17g},{:.17g}\n", rod, node, x, y, z);
}

void appendObstacleRow(std::string& out, std::string_view name, std::string_view shape, double x, double y, double z,
                       double nx, double ny, double nz, double radius) {
  fmt::format_to(std::back_inserter(out), "{},{},{},{},{},{},{},{},{}\n", name, shape, x, y, z, nx, ny, nz, radius);
}

}  // namespace rodsim::run_record
