// The VTK XML PolyData frames rodsim writes (vtk/frame_<k>.vtp): one polyline per rod, per-node
// point data. Written and read here so that the layout is known in one place: the kernel writes
// frames, `rodsim render`, `rodsim compare` and the tests read them.
//
// Two encodings, both opened by ParaView:
// - Ascii: numbers as text, the format of rodsim before issue 23 (kept byte for byte);
// - AppendedZlib (the default): every array zlib-compressed in the file's <AppendedData> section
//   as raw bytes, in the layout of VTK's vtkZLibDataCompressor (header_type UInt64): per array a
//   header [blocks, block size, size of the last partial block or 0, compressed size of each
//   block] followed by the compressed blocks.
#pragma once

#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

namespace rodsim::vtp {

enum class Encoding { Ascii, AppendedZlib };

// A file that is not a frame this library can read (truncated, another VTK dialect).
class FormatError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// One Float64 point-data array: `components` values per point.
struct PointArray {
  std::string name;
  int components = 1;
  std::vector<double> values;
  int ascii_digits = 9;  // significant digits in the Ascii encoding (the binary one is exact)
};

struct PolyLines {
  std::vector<double> points;            // x y z of each point
  std::vector<PointArray> point_data;    // in file order
  std::string scalars, vectors;          // the PointData attributes (active arrays in ParaView)
  std::vector<std::int64_t> connectivity;  // point indices of the polylines, one after another
  std::vector<std::int64_t> offsets;       // end of each polyline in connectivity

  std::size_t numPoints() const { return points.size() / 3; }
  // The array of that name, nullptr if the frame has none.
  const PointArray* find(const std::string& name) const;
};

std::string writePolyLines(const PolyLines& frame, Encoding encoding);

// Bounds on what a frame file may make the reader read and allocate (issue 43: hostile frames).
// A frame file is read only if it is a regular file of at most kMaxFrameBytes. Before any array is
// decoded, the sizes the appended arrays declare (inflated, when compressed) are added up, each
// array counted even when several point at the same data; the sum may not exceed
// kMaxInflatedBytes, nor kMaxInflateRatio times the file's size (deflate's most: no zlib stream
// inflates more). Decoded values (doubles) take at most twice those bytes (Float32, Int32
// arrays); ascii values at most 4 times the file's bytes.
inline constexpr std::uint64_t kMaxFrameBytes = std::uint64_t(256) << 20;
inline constexpr std::uint64_t kMaxInflatedBytes = std::uint64_t(1) << 30;
inline constexpr std::uint64_t kMaxInflateRatio = 1032;

// The bytes of a file a user points at, bounded before they are read: FormatError ("FILE: ...",
// naming `what`) unless it is a regular file (not a device, FIFO or directory) of at most
// `max_bytes`; at most `max_bytes` + 1 bytes are read, so a file that grows is bounded too.
// (rodsim::user_files' reader, with vtp's FormatError.)
std::string readBoundedFile(const std::filesystem::path& file, std::uint64_t max_bytes, const std::string& what);

// Reads either encoding (and uncompressed appended or inline ascii arrays of Float32/64,
// Int32/64 as other VTK writers produce them). Throws FormatError naming what is wrong.
PolyLines readPolyLines(const std::string& text);
// FormatError names the file; the file is bounded by kMaxFrameBytes.
PolyLines readPolyLinesFile(const std::filesystem::path& file);

}  // namespace rodsim::vtp
