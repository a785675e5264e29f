// The near field of the segment blocks: the closed forms of segment_integrals.h (Eqs. A.3-A.5)
// for all the segments near one target at once, over structure-of-arrays data, so that the
// compiler vectorizes across segments (the counterpart of far_field.h). The same operations in the
// same order as segmentBlocks, so bitwise its results (tests/plugins/fluid_rss); only the
// logarithms stay scalar calls, between two vector passes.
#pragma once

#include <rodsim/linalg.h>

#include <vector>

namespace rodsim::rss {

// The segments near one target: set() them one by one (count at most the capacity of resize()),
// then nearFieldBlocks() fills out.
struct NearFieldBatch {
  int count = 0;
  std::vector<int> segment;                    // the caller's segment index of entry j
  std::vector<double> r0x, r0y, r0z;           // r0 = x̂ - x_k
  std::vector<double> ex, ey, ez;              // e = x_{k+1} - x_k
  std::vector<double> eps2;                    // ε² of the segment
  std::vector<double> R0, R1, log_ratio;       // scratch of nearFieldBlocks
  std::vector<double> out;                     // [k * capacity + j], k = 0..11 (see nearFieldBlocks)
  std::vector<char> quadrature;                // 1: isFarField holds after all (see nearFieldBlocks)
  int capacity = 0;
  void resize(int capacity);
  void clear() { count = 0; }
  void add(int s, const Vec3& r0, const Vec3& e, double eps2_s) {
    const int j = count++;
    segment[j] = s;
    r0x[j] = r0.x(), r0y[j] = r0.y(), r0z[j] = r0.z();
    ex[j] = e.x(), ey[j] = e.y(), ez[j] = e.z();
    eps2[j] = eps2_s;
  }
};

// For every entry j: out[k * capacity + j], k = 0..5 the entries (xx yy zz xy xz yz) of the whole
// segment's block A_start + A_end, k = 6..11 those of A_end, as segmentBlocks gives them. An entry
// whose target is in the quadrature's domain after all (isFarField: the caller's near test and
// isFarField round differently at the boundary) is flagged in `quadrature` and its outputs are
// meaningless: the caller takes segmentBlocks there. Returns whether any entry was flagged.
bool nearFieldBlocks(NearFieldBatch& batch);

}  // namespace rodsim::rss
