// timeseries.csv read by column name (the contact report adds "<contact>.<column>" columns).
#pragma once

#include <rodsim/run_record/csv.h>

#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <vector>

namespace rodsim::test {

struct Table {
  std::vector<std::string> names;
  std::map<std::string, int> index;
  std::vector<std::vector<double>> rows;  // empty cells are NaN

  double at(std::size_t row, const std::string& name) const {
    auto it = index.find(name);
    REQUIRE_MESSAGE(it != index.end(), "no column " << name);
    return rows[row][it->second];
  }
  bool has(const std::string& name) const { return index.count(name) > 0; }
  std::size_t size() const { return rows.size(); }
};

// With libs/run_record's reader (the one reader of a run's files); a cell that is no number fails.
inline Table parseTable(const std::string& text) {
  const run_record::CsvTable csv = run_record::parseCsv(text, "timeseries.csv", false);
  Table t;
  t.names = csv.header;
  for (std::size_t c = 0; c < t.names.size(); ++c) t.index[t.names[c]] = static_cast<int>(c);
  for (std::size_t r = 0; r < csv.rows.size(); ++r) {
    std::vector<double> row;
    for (std::size_t c = 0; c < csv.rows[r].size(); ++c) row.push_back(csv.number(r, c));
    while (row.size() < t.names.size()) row.push_back(std::numeric_limits<double>::quiet_NaN());
    REQUIRE(row.size() == t.names.size());
    t.rows.push_back(row);
  }
  return t;
}

}  // namespace rodsim::test
