// Which primitive distance realizes the distance of two segments or of a point and a segment
// (Tong et al. 2023, Sec. 3.2: point-point Eq. 11, point-edge Eq. 12, edge-edge Eq. 13).
#pragma once

namespace rodsim::geometry {

enum class DistanceType { PointPoint, PointEdge, EdgeEdge };

inline const char* distanceTypeName(DistanceType t) {
  switch (t) {
    case DistanceType::PointPoint: return "point-point";
    case DistanceType::PointEdge: return "point-edge";
    case DistanceType::EdgeEdge: return "edge-edge";
  }
  return "?";
}

}  // namespace rodsim::geometry
