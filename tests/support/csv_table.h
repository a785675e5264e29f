// Reads the CSV files rodsim writes (timeseries.csv, final.csv) for end-to-end tests.
#pragma once

#include "run_rodsim.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

namespace rodsim::test {

struct CsvTable {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  int col(const std::string& name) const {
    auto it = std::find(header.begin(), header.end(), name);
    REQUIRE_MESSAGE(it != header.end(), "no column " << name);
    return static_cast<int>(it - header.begin());
  }
  double num(std::size_t row, const std::string& name) const { return std::stod(rows.at(row).at(col(name))); }
};

inline CsvTable readCsv(const std::filesystem::path& file) {
  CsvTable t;
  std::istringstream in(readText(file));
  std::string line;
  bool first = true;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    std::vector<std::string> cells;
    std::stringstream ss(line);
    std::string cell;
    while (std::getline(ss, cell, ',')) cells.push_back(cell);
    if (line.back() == ',') cells.emplace_back();  // an empty last cell (min_gap without contact)
    if (first) t.header = cells;
    else t.rows.push_back(cells);
    first = false;
  }
  return t;
}

// The rows of t without the named columns: those that measure the machine's clock, not the
// physics, when two runs are compared. Cells beyond the header are kept.
inline std::vector<std::vector<std::string>> rowsWithout(const CsvTable& t, const std::vector<std::string>& dropped) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& row : t.rows) {
    std::vector<std::string> kept;
    for (std::size_t c = 0; c < row.size(); ++c)
      if (c >= t.header.size() || std::find(dropped.begin(), dropped.end(), t.header[c]) == dropped.end())
        kept.push_back(row[c]);
    rows.push_back(kept);
  }
  return rows;
}

// The data rows of a CSV file as numbers (the header skipped; an empty cell is NaN), for tests
// that address columns by position.
inline std::vector<std::vector<double>> readNumericCsv(const std::filesystem::path& file) {
  std::istringstream in(readText(file));
  std::string line;
  std::getline(in, line);  // header
  std::vector<std::vector<double>> rows;
  while (std::getline(in, line)) {
    std::vector<double> row;
    std::istringstream ls(line);
    for (std::string cell; std::getline(ls, cell, ',');) row.push_back(cell.empty() ? NAN : std::atof(cell.c_str()));
    rows.push_back(row);
  }
  return rows;
}

}  // namespace rodsim::test
