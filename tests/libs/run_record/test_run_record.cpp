// rodsim::run_record: the one writer and reader of a run's summary.json, timeseries.csv and
// final.csv.
#include <rodsim/run_record/csv.h>
#include <rodsim/run_record/json.h>
#include <rodsim/run_record/summary.h>

#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <string>

#include <sys/stat.h>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace rodsim::run_record;

namespace {

std::string errorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const FormatError& e) {
    return e.what();
  }
  return "";
}

fs::path scratch(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("rodsim_test_run_record_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir / name;
}

void write(const fs::path& file, const std::string& text) { std::ofstream(file, std::ios::binary) << text; }

}  // namespace

TEST_CASE("summary.json: written and read back, every field") {
  Summary s;
  s.name = "rope \"over\" bar";
  s.scene = "scenes/a\\b.toml";
  s.status = "failed";
  s.reason = "line 1\nline 2\tend\x01";
  s.run_id = "0123456789abcdef";
  s.identity = "fedcba9876543210";
  s.steps = 1000;
  s.sim_time = 1.0;
  s.wall_time_s = 2.5;
  s.newton_iterations = 2000;
  s.aipts = 2;
  s.min_gap = std::numeric_limits<double>::infinity();  // no contact: null
  s.contact_report = {{"contact.kappa", 176.2260065}, {"contact.ccd_fraction", 0.5}};
  s.plugins = {{"der", "/p/rodsim-rod_der.so"}};
  s.version = "1.4";
  const std::string text = summaryText(s);
  CHECK(text.find("  \"min_gap\": null,\n") != std::string::npos);
  CHECK(text.find("\"reason\": \"line 1\\nline 2\\tend\\u0001\"") != std::string::npos);
  CHECK(text.find("  \"contact_report\": {\"contact.kappa\": 176.2260065, \"contact.ccd_fraction\": 0.5},\n") != std::string::npos);
  CHECK(text.find("  \"force_report\": {},\n") != std::string::npos);
  const std::string end = "  \"version\": \"1.4\"\n}\n";
  CHECK(text.compare(text.size() - end.size(), end.size(), end) == 0);

  const JsonValue v = parseJson(text, "summary.json");
  REQUIRE(v.isObject());
  CHECK(v.text("name") == s.name);
  CHECK(v.text("scene") == s.scene);
  CHECK(v.text("reason") == s.reason);
  CHECK(v.text("steps") == "1000");
  CHECK(v.numberOr("steps", 0) == 1000);
  CHECK(v.numberOr("wall_time_s", 0) == 2.5);
  CHECK(std::isnan(v.numberOr("min_gap", 0)));
  CHECK(v.numberOr("absent", -1) == -1);
  CHECK(v.text("absent").empty());
  REQUIRE(v.find("contact_report"));
  CHECK(v.find("contact_report")->asObject().size() == 2);
  CHECK(v.find("contact_report")->numberOr("contact.kappa", 0) == 176.2260065);
  CHECK(v.find("plugins")->text("der") == "/p/rodsim-rod_der.so");
  CHECK(v.find("iterations_are")->isString());

  // The file, bounded; a directory finds its summary.json.
  const fs::path file = scratch("summary.json");
  write(file, text);
  CHECK(readSummaryFile(file.parent_path()).text("run_id") == s.run_id);
  CHECK(errorOf([&] { readSummaryFile(file, 100); }).find("larger than") != std::string::npos);
  CHECK(errorOf([&] { readSummaryFile("/dev/zero"); }).find("not a regular file") != std::string::npos);
  write(file, "[1, 2]");
  CHECK(errorOf([&] { readSummaryFile(file); }).find("not a JSON object") != std::string::npos);
}

TEST_CASE("jsonNumber and jsonEscape: what the kernel has always written") {
  CHECK(jsonNumber(0.1) == "0.1");
  CHECK(jsonNumber(1e-5) == "1e-05");
  CHECK(jsonNumber(1.0 / 3) == "0.3333333333");
  CHECK(jsonNumber(123456789012.0) == "1.23456789e+11");
  CHECK(jsonNumber(std::nan("")) == "null");
  CHECK(jsonNumber(-std::numeric_limits<double>::infinity()) == "null");
  CHECK(jsonEscape("a\"b\\c\nd\te\x1f") == "a\\\"b\\\\c\\nd\\te\\u001f");
  CHECK(jsonEscape("\xc3\xa9") == "\xc3\xa9");  // UTF-8 passes through
  CHECK(jsonString("x") == "\"x\"");
}

TEST_CASE("JSON: the whole grammar") {
  const JsonValue v = parseJson(
      " {\"a\": [1, -2.5e3, 0, true, false, null, {}], \"s\": \"\\u00e9\\ud83d\\ude00\\/\\b\\f\\r\", \"n\": -0.0} ", "x");
  const auto& a = v.find("a")->asArray();
  REQUIRE(a.size() == 7);
  CHECK(a[1].asNumber() == -2500);
  CHECK(a[1].numberText() == "-2.5e3");
  CHECK(a[3].asBool());
  CHECK(!a[4].asBool());
  CHECK(a[5].isNull());
  CHECK(a[6].asObject().empty());
  CHECK(v.text("s") == "\xc3\xa9\xf0\x9f\x98\x80/\b\f\r");
  CHECK(v.find("n")->asNumber() == 0);
  CHECK(parseJson("1e400", "x").asNumber() == std::numeric_limits<double>::infinity());
  CHECK(errorOf([&] { v.find("s")->asNumber(); }).find("a string, not a number") != std::string::npos);
}

TEST_CASE("JSON: malformed text is refused with its byte offset") {
  auto err = [](const std::string& text) { return errorOf([&] { parseJson(text, "f.json"); }); };
  CHECK(err("") == "f.json: byte 0: the text ends where a value was expected");
  CHECK(err("{\"a\": 1,}") == "f.json: byte 8: expected a key (a string) in the object");
  CHECK(err("{\"a\" 1}") == "f.json: byte 5: expected ':' after the key");
  CHECK(err("{\"a\": 1") == "f.json: byte 7: expected ',' or '}' in the object");
  CHECK(err("[1 2]") == "f.json: byte 3: expected ',' or ']' in the array");
  CHECK(err("\"abc") == "f.json: byte 0: a string that does not end");
  CHECK(err("\"a\nb\"") == "f.json: byte 2: a control character in a string (it must be escaped)");
  CHECK(err("\"\\x\"") == "f.json: byte 1: unknown escape '\\x'");
  CHECK(err("\"\\u12\"") == "f.json: byte 3: \\u needs four hex digits");
  CHECK(err("\"\\ud800\"") == "f.json: byte 7: a high surrogate without its low one");
  CHECK(err("01") == "f.json: byte 1: text after the JSON value");
  CHECK(err("-") == "f.json: byte 1: a number without digits");
  CHECK(err("1.") == "f.json: byte 2: a number without digits after '.'");
  CHECK(err("1e+") == "f.json: byte 3: a number without digits in its exponent");
  CHECK(err("nul") == "f.json: byte 0: unexpected 'n' where a value was expected");
  CHECK(err("{} {}") == "f.json: byte 3: text after the JSON value");
  CHECK(err("NaN") == "f.json: byte 0: unexpected 'N' where a value was expected");
  CHECK(err(std::string(100, '[')).find("nested deeper than 64 levels") != std::string::npos);
}

TEST_CASE("timeseries.csv and final.csv: written as the kernel writes, read back") {
  std::string text = timeseriesHeader({"tip_x", "thrust"});
  CHECK(text == "step,t,iterations,wall_ms,contacts,min_gap,kinetic_energy,elastic_energy,tip_x,thrust\n");
  const double inf = std::numeric_limits<double>::infinity();
  appendTimeseriesRow(text, 0, 0, 0, 0, 0, inf, 0, 8.659927221e-36, {0.01, 0});
  appendTimeseriesRow(text, 1, 0.001, 2, 0.55244, 3, -1.5e-7, 3.82123448e-09, 1.0 / 3, {0.01, std::nan("")});
  CHECK(text.substr(text.find('\n') + 1) ==
        "0,0,0,0.0000,0,,0,8.659927221e-36,0.01,0\n"
        "1,0.001,2,0.5524,3,-1.5e-07,3.82123448e-09,0.3333333333,0.01,\n");
  const CsvTable t = parseCsv(text, "timeseries.csv");
  CHECK(t.header.size() == 10);
  REQUIRE(t.rows.size() == 2);
  CHECK(t.lines == std::vector<std::size_t>{2, 3});
  CHECK(t.column("tip_x") == 8);
  CHECK(t.column("nope") == -1);
  CHECK(std::isnan(t.number(0, 5)));  // min_gap without contact: empty
  CHECK(t.number(1, 5) == -1.5e-7);
  CHECK(std::isnan(t.number(1, 9)));
  CHECK(t.numbers("t") == std::vector<double>{0, 0.001});
  CHECK(errorOf([&] { t.numbers("nope"); }) == "timeseries.csv: no column 'nope'");

  std::string final(kFinalHeader);
  appendFinalRow(final, "beam", 0, 0.1, -0.2, 1.0 / 3);
  CHECK(final == "rod,node,x,y,z\nbeam,0,0.10000000000000001,-0.20000000000000001,0.33333333333333331\n");
  const CsvTable f = parseCsv(final, "final.csv");
  CHECK(f.rows[0][0] == "beam");
  CHECK(f.number(0, 2) == 0.1);
  CHECK(f.number(0, 4) == 1.0 / 3);  // 17 digits: the exact double
  CHECK(errorOf([&] { f.number(0, 0); }) == "final.csv:2: column rod: 'beam' is not a number");

  std::string obstacles(kObstaclesHeader);
  appendObstacleRow(obstacles, "floor", "plane", 0, 0, -0.2, 0, 0, 1, 0);
  appendObstacleRow(obstacles, "post", "cylinder", 0.1, 1.0 / 3, 0, 0, 1, 0, 0.025);
  CHECK(obstacles == "name,shape,x,y,z,nx,ny,nz,radius\nfloor,plane,0,0,-0.2,0,0,1,0\n"
                     "post,cylinder,0.1,0.3333333333333333,0,0,1,0,0.025\n");
  const CsvTable o = parseCsv(obstacles, "obstacles.csv");
  CHECK(o.number(1, 3) == 1.0 / 3);  // the shortest text of the exact double
}

TEST_CASE("CSV: malformed tables are refused with their line") {
  CHECK(errorOf([] { parseCsv("a,b\n1,2\n1,2,3\n", "x.csv"); }) == "x.csv:3: 3 cell(s), the header has 2");
  CHECK(parseCsv("a,b\n1,2\n1,2,3\n", "x.csv", false).rows[1].size() == 3);
  CHECK(errorOf([] { parseCsv("a\n" + std::string(20, '1') + "\n", "x.csv", true, 10); }) ==
        "x.csv:2: a line longer than 10 bytes");
  const CsvTable crlf = parseCsv("t,x\r\n\r\n0,1\r\n", "w.csv");  // Windows line ends, an empty line
  CHECK(crlf.header == std::vector<std::string>{"t", "x"});
  CHECK(crlf.lines == std::vector<std::size_t>{3});
  CHECK(parseCsv("", "e.csv").header.empty());
  double v = 0;
  CHECK(parseCell("1e-3", v));
  CHECK(v == 1e-3);
  CHECK(parseCell("+2", v));
  CHECK(v == 2);
  CHECK(!parseCell("+-2", v));
  CHECK(!parseCell("1.5x", v));
  CHECK(!parseCell(" 1", v));
  CHECK(!parseCell("abc", v));
  CHECK(parseCell("", v));
  CHECK(std::isnan(v));
}

TEST_CASE("CSV files: bounded before they are read; the last time of a growing timeseries") {
  const fs::path file = scratch("timeseries.csv");
  write(file, timeseriesHeader({}) + "0,0,0,0.0000,0,,0,0\n1,0.25,1,0.1000,0,,0,0\n2,0.5,1,0.1000,0,,0,0\n3,0.7");
  CHECK(errorOf([&] { readCsvFile(file, 10, "run's timeseries.csv"); }).find("larger than") != std::string::npos);
  CHECK(errorOf([&] { readCsvFile(file.parent_path(), 1 << 20, "run's timeseries.csv"); }).find("not a regular file") !=
        std::string::npos);
  const fs::path fifo = scratch("fifo.csv");
  ::mkfifo(fifo.c_str(), 0600);
  CHECK(errorOf([&] { readCsvFile(fifo, 1 << 20, "run's timeseries.csv"); }).find("not a regular file") != std::string::npos);
  CHECK(lastTime(fifo) == 0);
  CHECK(lastTime(file) == 0.5);  // the partial row "3,0.7" is not whole yet
  CHECK(lastTime(scratch("absent.csv")) == 0);
  write(file, timeseriesHeader({}));
  CHECK(lastTime(file) == 0);

  // --restart keeps the rows up to the checkpoint's step.
  write(file, timeseriesHeader({}) + "0,0,0,0.0000,0,,0,0\n1,0.25,1,0.1000,0,,0,0\n2,0.5,1,0.1000,0,,0,0\n");
  CHECK(timeseriesRowsUpTo(file, 2, 1) == timeseriesHeader({}) + "0,0,0,0.0000,0,,0,0\n1,0.25,1,0.1000,0,,0,0\n");
  CHECK(!timeseriesRowsUpTo(file, 2, 2));
  CHECK(!timeseriesRowsUpTo(file, 5, 4));
  fs::remove_all(file.parent_path());
}
