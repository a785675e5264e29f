// Fixed-size Eigen types of the geometry library (rodsim::geometry). Vec3 and Mat3 are the SDK's
// (rodsim::Vec3, rodsim::Mat3 are the same Eigen types).
#pragma once

#include <Eigen/Core>
#include <Eigen/Geometry>  // cross products

namespace rodsim::geometry {

using Vec3 = Eigen::Vector3d;
using Mat3 = Eigen::Matrix3d;
using Vec6 = Eigen::Matrix<double, 6, 1>;
using Mat6 = Eigen::Matrix<double, 6, 6>;
using Vec9 = Eigen::Matrix<double, 9, 1>;
using Mat9 = Eigen::Matrix<double, 9, 9>;
using Vec12 = Eigen::Matrix<double, 12, 1>;
using Mat12 = Eigen::Matrix<double, 12, 12>;

}  // namespace rodsim::geometry
