// Scalar building blocks of the IPC energy: the clamped log barrier on a gap (Tong et al. 2023, Eq. 8,
// applied to the gap d = distance - r_i - r_j) and the cross-product mollifier of nearly parallel
// edges (its argument: edgeCrossSquared in segment_segment_distance.h). Each returns its value with
// first and second derivatives. Used by contact_ipc.
#pragma once

#include <rodsim/geometry/scalar2.h>

namespace rodsim::geometry {

// b(d) = -(d - d_hat)^2 ln(d / d_hat) for 0 < d < d_hat, 0 for d >= d_hat (C2 at d_hat: b, b', b''
// all vanish there). Unbounded as d -> 0+; undefined for d <= 0 (the caller never evaluates it
// there: CCD keeps every gap positive). Units: m^2 when d is in m.
Scalar2 barrier(double d, double d_hat);

// IPC's edge-edge mollifier m(x) = (2 - x/eps) x/eps for x < eps, 1 beyond, x = |e_a x e_b|^2:
// C1 at eps (m' = 0 there), 0 for parallel edges.
Scalar2 mollifier(double x, double eps);

}  // namespace rodsim::geometry
