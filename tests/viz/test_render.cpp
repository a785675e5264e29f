// rodsim render, rodsim plot and the binary VTK frames, end to end (issue 23).
#include "png_image.h"
#include "csv_table.h"
#include "run_rodsim.h"

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <rodsim/vtp/collection.h>
#include <rodsim/vtp/polydata.h>

#include <zlib.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <sstream>

namespace fs = std::filesystem;
using namespace rodsim::test;

namespace {

// Two straight rods, nothing acting on them: they stay where they are. Rod "a" lies on the x axis
// from -0.5 to 0.5, rod "b" 0.4 above it and on the right half only (x from 0.1 to 0.5).
const char* kTwoRods = R"([simulation]
duration = 0.02
dt = 0.01

[solver]
type = "implicit-euler"

[[rod]]
name = "a"
model = "der"
nodes = 11
radius = 0.05
density = 1000.0
youngs_modulus = 1e6
geometry = { shape = "straight", start = [-0.5, 0, 0], end = [0.5, 0, 0] }

[[rod]]
name = "b"
model = "der"
nodes = 5
radius = 0.05
density = 1000.0
youngs_modulus = 1e6
geometry = { shape = "straight", start = [0.1, 0, 0.4], end = [0.5, 0, 0.4] }

[output]
every = 0.01
)";

fs::path runTwoRods(const std::string& name, const std::string& extra = "") {
  const fs::path dir = scratchDir(name);
  const fs::path scene = writeText(dir / "two_rods.toml", kTwoRods);
  const CommandResult r = runRodsim("run " + scene.string() + " --quiet --output " + (dir / "out").string() + extra);
  INFO(r.output);
  REQUIRE(r.status == 0);
  return dir;
}

bool isBackground(const std::array<int, 3>& p) { return p[0] > 235 && p[1] > 235 && p[2] > 235; }

// The numbers of one ascii DataArray, as written.
std::vector<std::string> asciiTokens(const std::string& text, const std::string& marker) {
  auto at = text.find(marker);  // "<Points>" or an attribute of the DataArray tag
  REQUIRE(at != std::string::npos);
  at = text.find('>', marker == "<Points>" ? text.find("<DataArray", at) : at) + 1;
  std::istringstream in(text.substr(at, text.find("</DataArray>", at) - at));
  std::vector<std::string> tokens;
  for (std::string t; in >> t;) tokens.push_back(t);
  return tokens;
}

}  // namespace

TEST_CASE("the binary VTK frames decode to the numbers of the ascii ones") {
  const fs::path dir = runTwoRods("vtk_binary");
  const CommandResult r = runRodsim("run " + (dir / "two_rods.toml").string() + " --quiet --set output.vtk_format=ascii --output " +
                                    (dir / "ascii").string());
  REQUIRE(r.status == 0);
  for (int k = 0; k <= 2; ++k) {
    const fs::path binary = dir / "out/vtk" / fmt::format("frame_{}.vtp", k), ascii = dir / "ascii/vtk" / fmt::format("frame_{}.vtp", k);
    const std::string text = readText(ascii);
    CHECK(readText(binary).find("format=\"appended\"") != std::string::npos);
    CHECK(text.find("format=\"appended\"") == std::string::npos);
    // rodsim's reader: every value, printed as the ascii writer prints it, is the ascii token.
    const rodsim::vtp::PolyLines frame = rodsim::vtp::readPolyLinesFile(binary);
    auto same = [&](const std::vector<double>& values, const std::string& marker, int digits) {
      const auto tokens = asciiTokens(text, marker);
      REQUIRE(tokens.size() == values.size());
      for (std::size_t i = 0; i < values.size(); ++i) CHECK(fmt::format("{:.{}g}", values[i], digits) == tokens[i]);
    };
    same(frame.points, "<Points>", 9);
    for (const auto& a : frame.point_data) same(a.values, "Name=\"" + a.name + "\"", a.name == "director_m1" ? 6 : 9);
    same({frame.connectivity.begin(), frame.connectivity.end()}, "Name=\"connectivity\"", 17);
    same({frame.offsets.begin(), frame.offsets.end()}, "Name=\"offsets\"", 17);
    CHECK(frame.offsets == std::vector<std::int64_t>{11, 16});
    // A second reader written apart from the C++ one (scripts/rodsim_vtp.py, standard library
    // zlib and struct) agrees as well.
    const CommandResult py = runCommand("/usr/bin/python3 tests/viz/compare_encodings.py " + binary.string() + " " + ascii.string());
    INFO(py.output);
    CHECK(py.status == 0);
  }
  // The ascii encoding reads back too, and a damaged binary file is refused with its name.
  CHECK(rodsim::vtp::readPolyLinesFile(dir / "ascii/vtk/frame_1.vtp").numPoints() == 16);
  std::string broken = readText(dir / "out/vtk/frame_1.vtp");
  broken.resize(broken.size() - 60);
  writeText(dir / "broken.vtp", broken);
  CHECK_THROWS_WITH_AS(rodsim::vtp::readPolyLinesFile(dir / "broken.vtp"), doctest::Contains("broken.vtp"), rodsim::vtp::FormatError);
}

TEST_CASE("a frame collection (.pvd) reads back what was written; a bad DataSet names its line") {
  namespace fs = std::filesystem;
  const fs::path dir = rodsim::test::scratchDir("vtp-collection");
  const std::vector<rodsim::vtp::CollectionEntry> frames{{0.0, "frame_0.vtp"}, {0.125, "frame_1.vtp"}, {1.0 / 3, "frame_2.vtp"}};
  rodsim::test::writeText(dir / "run.pvd", rodsim::vtp::writeCollection(frames));
  const auto back = rodsim::vtp::readCollectionFile(dir / "run.pvd");
  REQUIRE(back.size() == 3);
  CHECK(back[1].time == 0.125);
  CHECK(back[2].time == doctest::Approx(1.0 / 3).epsilon(1e-10));  // 10 significant digits
  CHECK(back[2].file == dir / "frame_2.vtp");
  rodsim::test::writeText(dir / "bad.pvd", "<Collection>\n<DataSet timestep=\"x\" file=\"frame_0.vtp\"/>\n");
  try {
    rodsim::vtp::readCollectionFile(dir / "bad.pvd");
    FAIL("no FormatError");
  } catch (const rodsim::vtp::FormatError& e) {
    CHECK(std::string(e.what()).find("bad.pvd:2:") != std::string::npos);
  }
}

TEST_CASE("ParaView's reader opens the binary frames (when pvpython is installed)") {
  if (runCommand("command -v pvpython").status != 0) {
    MESSAGE("skipped: pvpython is not installed (Debian package paraview; not installed by scripts/setup.sh, it is large)");
    return;
  }
  const fs::path dir = runTwoRods("vtk_paraview");
  const CommandResult r = runCommand("pvpython --force-offscreen-rendering tests/viz/paraview_open.py " + (dir / "out/vtk/two_rods.pvd").string());
  INFO(r.output);
  CHECK(r.status == 0);
  // The last frame as ParaView reads it: its last point is the end of rod b, as rodsim wrote it.
  const auto frame = rodsim::vtp::readPolyLinesFile(dir / "out/vtk/frame_2.vtp");
  const std::size_t n = frame.points.size();
  CHECK(r.output.find(fmt::format("points 16 lines 2 frames 3 radius 0.05..0.05 last point {:.9g} {:.9g} {:.9g}", frame.points[n - 3],
                                  frame.points[n - 2], frame.points[n - 1])) != std::string::npos);
}

TEST_CASE("rodsim render draws the rods where the scene puts them, and a movie") {
  const fs::path dir = runTwoRods("render");
  // Looking along +y from 3 m away, z up: rod a is a horizontal band through the middle of the
  // picture, rod b a shorter band above it on the right.
  const CommandResult r = runRodsim("render " + (dir / "out").string() +
                                    " --frame all --size 160x120 --camera 0,-3,0 --look-at 0,0,0 --fov 40 --jobs 2 --movie " +
                                    (dir / "two_rods.mp4").string());
  INFO(r.output);
  REQUIRE(r.status == 0);
  for (int k = 0; k <= 2; ++k) CHECK(fs::exists(dir / "out/render" / fmt::format("frame_{:05d}.png", k)));
  CHECK(fs::file_size(dir / "two_rods.mp4") > 0);
  for (const auto& entry : fs::directory_iterator(dir / "out/render"))  // the scratch folder is cleaned up
    CHECK(entry.path().extension() == ".png");

  const PngImage image = readPng(dir / "out/render/frame_00002.png");
  REQUIRE(image.width == 160);
  REQUIRE(image.height == 120);
  // Horizontal half-width seen at 3 m: 3 tan(20 deg) = 1.09 m over 80 px; vertical: 0.82 m over 60 px.
  const auto a = image.at(80, 60), b = image.at(102, 31);
  INFO("rod a pixel " << a[0] << "," << a[1] << "," << a[2] << "; rod b pixel " << b[0] << "," << b[1] << "," << b[2]);
  CHECK(!isBackground(a));
  CHECK(a[2] > a[0]);  // rod a: the first colour, blue
  CHECK(!isBackground(b));
  CHECK(b[0] > b[2]);  // rod b: the second colour, orange
  CHECK(isBackground(image.at(58, 31)));  // left of rod b: the picture is not mirrored
  CHECK(isBackground(image.at(80, 100)));  // below rod a
  int drawn = 0;
  for (const auto& p : image.rgb) drawn += !isBackground(p);
  CHECK(drawn > 300);

  // One frame, by time, coloured by a field, to a named file.
  const CommandResult one = runRodsim("render " + (dir / "out").string() + " --frame 0.011 --size 64x48 --color twist_angle --quiet --output " +
                                      (dir / "one.png").string());
  INFO(one.output);
  CHECK(one.status == 0);
  CHECK(readPng(dir / "one.png").width == 64);
}

TEST_CASE("the obstacles are recorded beside the frames and drawn") {
  const fs::path dir = scratchDir("render_obstacles");
  const std::string scene = std::string(kTwoRods) + R"(
[[obstacle]]
name = "floor"
shape = "plane"
origin = [0, 0, -0.2]
normal = [0, 0, 1]

[[contact]]
type = "imc"
)";
  writeText(dir / "floor.toml", scene);
  CommandResult r = runRodsim("run " + (dir / "floor.toml").string() + " --quiet --output " + (dir / "out").string());
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK(readText(dir / "out/vtk/obstacles.csv") == "name,shape,x,y,z,nx,ny,nz,radius\nfloor,plane,0,0,-0.2,0,0,1,0\n");
  r = runRodsim("render " + (dir / "out").string() + " --size 160x120 --camera 0,-3,0 --look-at 0,0,0 --fov 40 --quiet --output " +
                (dir / "floor.png").string());
  REQUIRE(r.status == 0);
  // Below the rods the camera looks down onto the floor 0.2 m under them: its checkers, not the
  // white background (without the floor these rows are empty: the test above).
  const PngImage image = readPng(dir / "floor.png");
  int floor = 0;
  for (int y = 100; y < 120; ++y)
    for (int x = 0; x < 160; ++x) floor += !isBackground(image.at(x, y));
  CHECK(floor > 160 * 20 / 5);
}

TEST_CASE("rodsim render refuses bad input and names the package of a missing renderer") {
  const fs::path dir = runTwoRods("render_errors");
  const std::string out = (dir / "out").string();
  CommandResult r = runCommand("PATH=/nonexistent " + std::string(RODSIM_EXECUTABLE) + " render " + out);
  CHECK(r.status == 2);
  CHECK(r.output.find("'povray'") != std::string::npos);
  CHECK(r.output.find("apt-get install povray") != std::string::npos);
  // povray there, ffmpeg not: the movie needs the package ffmpeg.
  const std::string povray = runCommand("command -v povray").output;
  fs::create_directories(dir / "bin");
  fs::create_symlink(povray.substr(0, povray.find('\n')), dir / "bin/povray");
  r = runCommand("PATH=" + (dir / "bin").string() + " " + std::string(RODSIM_EXECUTABLE) + " render " + out + " --movie m.mp4");
  CHECK(r.status == 2);
  CHECK(r.output.find("Debian package 'ffmpeg'") != std::string::npos);

  r = runRodsim("render " + out + " --color speed");
  CHECK(r.status == 2);
  CHECK(r.output.find("no such point array") != std::string::npos);
  CHECK(r.output.find("velocity") != std::string::npos);
  r = runRodsim("render " + out + " --size 800");
  CHECK(r.status == 2);
  CHECK(r.output.find("WIDTHxHEIGHT") != std::string::npos);
  r = runRodsim("render " + (dir / "nowhere").string());
  CHECK(r.status == 2);

  // Issue 43: a camera standing at the point it looks at reached POV-Ray (exit 3, its log dumped, a
  // scratch folder left). Refused before anything is written.
  r = runRodsim("render " + out + " --camera 0.1,0.2,0.3 --look-at 0.1,0.2,0.3");
  INFO(r.output);
  CHECK(r.status == 2);
  CHECK(r.output.find("--camera 0.1,0.2,0.3 is the point it looks at (--look-at)") != std::string::npos);
  CHECK(r.output.find("povray") == std::string::npos);
  CHECK_FALSE(fs::exists(dir / "out" / "render"));
}

TEST_CASE("rodsim plot draws the standard plots of timeseries.csv") {
  if (runCommand("/usr/bin/python3 -c 'import matplotlib'").status != 0) {
    MESSAGE("skipped: /usr/bin/python3 has no matplotlib (scripts/setup.sh installs python3-matplotlib)");
    return;
  }
  const fs::path dir = runTwoRods("plot");
  const CommandResult r = runRodsim("plot " + (dir / "out").string());
  INFO(r.output);
  REQUIRE(r.status == 0);
  for (const char* png : {"energies.png", "solves.png"}) {
    CHECK_MESSAGE(fs::exists(dir / "out" / png), png);
    CHECK(r.output.find(png) != std::string::npos);
  }
  // The two rods never come near each other (no contact model): no empty contacts.png.
  CHECK_FALSE(fs::exists(dir / "out" / "contacts.png"));
  CHECK(r.output.find("no contact in this run") != std::string::npos);
  CHECK(runRodsim("plot " + (dir / "nowhere").string()).status == 2);

  // The same table with a pair in contact from the second row on: contacts.png is drawn.
  {
    const fs::path table = dir / "out" / "timeseries.csv";
    const CsvTable read = readCsv(table);
    const std::size_t contacts = static_cast<std::size_t>(read.col("contacts"));
    const std::size_t min_gap = static_cast<std::size_t>(read.col("min_gap"));
    std::string text = fmt::format("{}\n", fmt::join(read.header, ","));
    for (std::size_t i = 0; i < read.rows.size(); ++i) {
      auto row = read.rows[i];
      row[contacts] = i ? "1" : "0";
      row[min_gap] = i ? "1e-4" : "";
      text += fmt::format("{}\n", fmt::join(row, ","));
    }
    writeText(table, text);
    const CommandResult touching = runRodsim("plot " + (dir / "out").string());
    INFO(touching.output);
    REQUIRE(touching.status == 0);
    CHECK(fs::exists(dir / "out" / "contacts.png"));
    CHECK(touching.output.find("contacts.png") != std::string::npos);
  }

  // Issue 43: a text cell or random bytes in timeseries.csv gave a Python traceback and exit 3. Now
  // exit 2 and a message naming the file and the line.
  const fs::path table = dir / "out" / "timeseries.csv";
  std::string text = readText(table);
  const std::size_t third = text.find('\n', text.find('\n') + 1) + 1;  // line 3 (the second row)
  text.replace(third, text.find(',', third) - third, "abc");
  writeText(table, text);
  CommandResult bad = runRodsim("plot " + (dir / "out").string());
  INFO(bad.output);
  CHECK(bad.status == 2);
  CHECK(bad.output.find(table.string() + ":3: column 'step': 'abc' is not a number") != std::string::npos);
  CHECK(bad.output.find("Traceback") == std::string::npos);
  std::string bytes(4096, '\0');
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>((i * 2654435761u) >> 13);
  writeText(table, bytes);
  bad = runRodsim("plot " + (dir / "out").string());
  INFO(bad.output);
  CHECK(bad.status == 2);
  CHECK(bad.output.find(table.string()) != std::string::npos);
  CHECK(bad.output.find("Traceback") == std::string::npos);
  // /dev/zero (read until memory ran out) or a sparse file over 256 MiB: refused before reading.
  fs::remove(table);
  fs::create_symlink("/dev/zero", table);
  bad = runRodsim("plot " + (dir / "out").string());
  INFO(bad.output);
  CHECK(bad.status == 2);
  CHECK(bad.output.find(table.string() + ": not a regular file") != std::string::npos);
  fs::remove(table);
  writeText(table, "step,t\n");
  fs::resize_file(table, (std::uintmax_t(256) << 20) + 1);
  bad = runRodsim("plot " + (dir / "out").string());
  INFO(bad.output);
  CHECK(bad.status == 2);
  CHECK(bad.output.find(table.string() + ": larger than 256 MiB") != std::string::npos);
}

namespace {

// rodsim with its address space capped at `kib` KiB: what it allocates stays below that or it fails
// (not in the sanitizer build, whose shadow memory reserves terabytes of address space).
CommandResult runRodsimCapped(const std::string& args, long kib) {
#ifdef RODSIM_SANITIZED
  (void)kib;
  return runRodsim(args);
#else
  return runCommand(fmt::format("ulimit -v {}; {} {}", kib, RODSIM_EXECUTABLE, args));
#endif
}

// A binary frame (header UInt64, zlib) whose Points and `arrays` point-data arrays all point at one
// appended array: `blocks` blocks of `block_size` zero bytes, the same small compressed block
// repeated. Small on disk; each array declares blocks * block_size bytes.
std::string inflateBomb(int arrays, std::uint64_t blocks, std::uint64_t block_size) {
  std::string zeros(32768, '\0');
  std::string block(compressBound(zeros.size()), '\0');
  uLongf length = block.size();
  REQUIRE(compress2(reinterpret_cast<Bytef*>(block.data()), &length, reinterpret_cast<const Bytef*>(zeros.data()), zeros.size(), 9) == Z_OK);
  block.resize(length);
  std::string data;
  auto word = [&](std::uint64_t v) {
    char bytes[8];
    std::memcpy(bytes, &v, 8);
    data.append(bytes, 8);
  };
  word(blocks);
  word(block_size);
  word(0);
  for (std::uint64_t b = 0; b < blocks; ++b) word(block.size());
  for (std::uint64_t b = 0; b < blocks; ++b) data += block;
  std::string text =
      "<?xml version=\"1.0\"?>\n<VTKFile type=\"PolyData\" version=\"1.0\" byte_order=\"LittleEndian\" header_type=\"UInt64\" "
      "compressor=\"vtkZLibDataCompressor\">\n<PolyData>\n<Piece NumberOfPoints=\"1\" NumberOfLines=\"0\">\n"
      "<Points><DataArray type=\"Float64\" NumberOfComponents=\"3\" format=\"appended\" offset=\"0\"/></Points>\n<PointData>\n";
  for (int k = 0; k < arrays; ++k)
    text += fmt::format("<DataArray type=\"Float64\" Name=\"a{}\" format=\"appended\" offset=\"0\"/>\n", k);
  text += "</PointData>\n</Piece>\n</PolyData>\n<AppendedData encoding=\"raw\">\n_" + data + "\n</AppendedData>\n</VTKFile>\n";
  return text;
}

}  // namespace

TEST_CASE("rodsim render bounds what hostile frames and .pvd files make it read and allocate (issue 43)") {
  const fs::path dir = runTwoRods("render_hostile");
  const fs::path out = dir / "out", frame = out / "vtk/frame_2.vtp", pvd = out / "vtk/two_rods.pvd";
  const std::string original = readText(frame), original_pvd = readText(pvd);
  auto refused = [&](const std::string& args, const std::string& message) {
    const CommandResult r = runRodsimCapped("render " + out.string() + " " + args + " --quiet", 512 * 1024);
    INFO(r.output);
    CHECK(r.status == 2);
    CHECK(r.output.find(message) != std::string::npos);
    CHECK(r.output.find("internal error") == std::string::npos);
  };

  SUBCASE("a frame that is /dev/zero, a FIFO or larger than 256 MiB is refused before it is read") {
    // It was read to the end of memory: 6.3 GB, then exit 2.
    fs::remove(frame);
    fs::create_symlink("/dev/zero", frame);
    refused("", frame.string() + ": not a regular file");
    fs::remove(frame);
    REQUIRE(runCommand("mkfifo " + frame.string()).status == 0);
    refused("", frame.string() + ": not a regular file");  // does not wait for a writer
    fs::remove(frame);
    writeText(frame, original);
    fs::resize_file(frame, (std::uintmax_t(256) << 20) + 1);  // sparse
    refused("", frame.string() + ": larger than 256 MiB");
    CHECK_THROWS_WITH_AS(rodsim::vtp::readPolyLinesFile(frame), doctest::Contains("larger than 256 MiB"), rodsim::vtp::FormatError);
    // The obstacles beside the frames likewise (a regular file of at most 16 MiB, short lines).
    writeText(frame, original);
    fs::create_symlink("/dev/zero", out / "vtk/obstacles.csv");
    refused("", (out / "vtk/obstacles.csv").string() + ": not a regular file");
    fs::remove(out / "vtk/obstacles.csv");
    writeText(out / "vtk/obstacles.csv", "name,shape,x,y,z,nx,ny,nz,radius\n" + std::string(5000, 'x') + "\n");
    refused("", (out / "vtk/obstacles.csv").string() + ":2: a line longer than 4096 bytes");
    fs::remove(out / "vtk/obstacles.csv");
  }

  SUBCASE("arrays that share one compressed block are refused before anything inflates") {
    // 21 arrays on one array of 32768 blocks of 32 KiB zeros (2 MB on disk, 1 GiB each): it was
    // 3.15 GB, then "internal error: std::bad_alloc" (21 GiB asked for).
    const std::string bomb = inflateBomb(21, 32768, 32768);
    CHECK(bomb.size() < 2'100'000);
    writeText(frame, bomb);
    refused("", frame.string() + ": the appended arrays declare more than 1073741824 bytes inflated");
    // One array declaring 1 GiB from a file of 1 KB: more than deflate can inflate (1032 to 1).
    writeText(frame, inflateBomb(0, 1, std::uint64_t(1) << 30));
    CHECK_THROWS_WITH_AS(rodsim::vtp::readPolyLinesFile(frame), doctest::Contains("at most 1032 times the file's"),
                         rodsim::vtp::FormatError);
    refused("", "at most 1032 times the file's");
  }

  SUBCASE(".pvd: frames are read one at a time; its size, lines and entries are bounded") {
    // 8000 entries of a frame of 2000 points (128 KB once decoded; 1 GB for all of them), the last
    // one /dev/zero: every frame was decoded before the first image. Read one at a time, it stays
    // within 512 MiB of address space and reaches the bad frame.
    rodsim::vtp::PolyLines big;
    for (int i = 0; i < 2000; ++i) {
      big.points.insert(big.points.end(), {i * 1e-3, 0.0, 0.0});
      big.connectivity.push_back(i);
    }
    big.offsets = {2000};
    big.point_data.push_back({"radius", 1, std::vector<double>(2000, 0.01)});
    big.point_data.push_back({"velocity", 3, std::vector<double>(6000, 0.0)});
    writeText(out / "vtk/big.vtp", rodsim::vtp::writePolyLines(big, rodsim::vtp::Encoding::AppendedZlib));
    std::vector<rodsim::vtp::CollectionEntry> entries;
    for (int k = 0; k < 8000; ++k) entries.push_back({k * 0.01, "big.vtp"});
    entries.push_back({80.0, "/dev/zero"});
    writeText(pvd, rodsim::vtp::writeCollection(entries));
    refused("--frame all", "/dev/zero: not a regular file");
    // More DataSets than a run writes (1e6).
    std::string many = "<Collection>\n";
    for (int k = 0; k <= 1'000'000; ++k) many += "<DataSet timestep=\"0\" file=\"frame_0.vtp\"/>\n";
    writeText(pvd, many);
    refused("", pvd.string() + ":1000002: more than 1000000 DataSets");
    // A line of 10,000 bytes; a sparse file over 128 MiB.
    writeText(pvd, "<Collection>\n<DataSet timestep=\"0\" file=\"" + std::string(10'000, 'x') + "\"/>\n");
    refused("", pvd.string() + ":2: a line longer than 8192 bytes");
    writeText(pvd, original_pvd);
    fs::resize_file(pvd, (std::uintmax_t(128) << 20) + 1);
    refused("", pvd.string() + ": larger than 128 MiB");
  }
}
