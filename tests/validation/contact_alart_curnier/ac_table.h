// timeseries.csv read by column name (the contact report adds "<contact>.<column>" columns).
#pragma once

#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <map>
#include <sstream>
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

inline Table parseTable(const std::string& text) {
  Table t;
  std::istringstream in(text);
  std::string line, cell;
  std::getline(in, line);
  std::stringstream hs(line);
  while (std::getline(hs, cell, ',')) {
    t.index[cell] = static_cast<int>(t.names.size());
    t.names.push_back(cell);
  }
  while (std::getline(in, line)) {
    std::vector<double> row;
    std::stringstream ss(line);
    while (std::getline(ss, cell, ','))
      row.push_back(cell.empty() ? std::numeric_limits<double>::quiet_NaN() : std::stod(cell));
    while (row.size() < t.names.size()) row.push_back(std::numeric_limits<double>::quiet_NaN());
    REQUIRE(row.size() == t.names.size());
    t.rows.push_back(row);
  }
  return t;
}

}  // namespace rodsim::test
