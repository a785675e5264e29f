// Central finite differences for derivative checks (installed with the SDK: <rodsim/testing/...>) (gradients and
// Hessians against their energies, Jacobians against their forces).
#pragma once

#include <Eigen/Core>

namespace rodsim::testing {

// d f / d x (f scalar) by central differences with step h.
template <class F, class V>
V fdGradient(F f, V x, double h) {
  V g = V::Zero(x.size());
  for (int i = 0; i < x.size(); ++i) {
    const double xi = x[i];
    x[i] = xi + h;
    const double fp = f(x);
    x[i] = xi - h;
    const double fm = f(x);
    x[i] = xi;
    g[i] = (fp - fm) / (2 * h);
  }
  return g;
}

// d g / d x (g vector valued), column by column.
template <class G, class V>
Eigen::MatrixXd fdJacobian(G g, V x, double h) {
  const Eigen::VectorXd g0 = g(x);
  Eigen::MatrixXd J(g0.size(), x.size());
  for (int i = 0; i < x.size(); ++i) {
    const double xi = x[i];
    x[i] = xi + h;
    const Eigen::VectorXd gp = g(x);
    x[i] = xi - h;
    const Eigen::VectorXd gm = g(x);
    x[i] = xi;
    J.col(i) = (gp - gm) / (2 * h);
  }
  return J;
}

// |a - b| / |b| (Frobenius), |a - b| when b = 0.
inline double relErr(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) {
  const double nb = b.norm();
  return nb > 0 ? (a - b).norm() / nb : (a - b).norm();
}

}  // namespace rodsim::testing
