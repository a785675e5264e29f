// Reads the files rodsim writes (timeseries.csv, final.csv, summary.json) for end-to-end tests, with
// libs/run_record: the one reader of a run's files.
#pragma once

#include "run_rodsim.h"

#include <rodsim/run_record/csv.h>
#include <rodsim/run_record/json.h>

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

namespace rodsim::test {

// run_record's table (header, rows of cells, each row's line) with the tests' accessors.
struct CsvTable : run_record::CsvTable {
  int col(const std::string& name) const {
    const long c = column(name);
    REQUIRE_MESSAGE(c >= 0, "no column " << name);
    return static_cast<int>(c);
  }
  // An empty cell (min_gap without contact) is NaN; a cell that is no number fails the test.
  double num(std::size_t row, const std::string& name) const { return number(row, static_cast<std::size_t>(col(name))); }
};

// A CSV file rodsim wrote; rows may be of any width (a test may read a CSV it has edited).
inline CsvTable readCsv(const std::filesystem::path& file) {
  CsvTable t;
  static_cast<run_record::CsvTable&>(t) = run_record::readCsvFile(file, run_record::kMaxRunCsvBytes, "CSV file", false);
  return t;
}

// The member `key` of a JSON object: at the top, else the first one inside (depth first).
inline const run_record::JsonValue* findJson(const run_record::JsonValue& v, const std::string& key) {
  if (const run_record::JsonValue* found = v.find(key)) return found;
  if (v.isObject())
    for (const auto& member : v.asObject())
      if (const run_record::JsonValue* found = findJson(member.second, key)) return found;
  return nullptr;
}

// The number stored under `key` in a summary.json text (or any JSON object rodsim writes, e.g.
// fit.json: the first `key` when it is not at the top): NaN for null (a value that was not
// finite); the test fails when the key is absent.
inline double jsonNumber(const std::string& json, const std::string& key) {
  const run_record::JsonValue v = run_record::parseJson(json, "summary.json");
  const run_record::JsonValue* found = findJson(v, key);
  REQUIRE_MESSAGE(found, "no " << key << " in summary.json");
  return found->isNumber() ? found->asNumber() : NAN;
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
  const CsvTable t = readCsv(file);
  std::vector<std::vector<double>> rows;
  for (const auto& cells : t.rows) {
    std::vector<double> row;
    for (const auto& cell : cells) {
      double v = NAN;
      if (!run_record::parseCell(cell, v)) v = NAN;  // a text cell (final.csv's rod)
      row.push_back(v);
    }
    rows.push_back(row);
  }
  return rows;
}

}  // namespace rodsim::test
