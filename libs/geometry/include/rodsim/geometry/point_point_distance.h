// Squared distance of two points with its gradient and Hessian (Tong et al. 2023, Eq. 11 squared).
#pragma once

#include <rodsim/geometry/types.h>

namespace rodsim::geometry {

// g = |a - b|^2 and, when the pointers are given, dg (6) and d2g (6 x 6) over x = (a, b).
void pointPointSq(const Vec3& a, const Vec3& b, double& g, Vec6* dg, Mat6* d2g);

}  // namespace rodsim::geometry
