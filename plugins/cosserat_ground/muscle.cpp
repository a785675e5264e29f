// The `muscle-torque` force: the travelling torque wave of Gazzola et al.'s muscular activity
// (Sec. IV.2, Eq. 33 for the amplitude, Eq. 35 for a couple along a material director, Fig. 6 for
// the cubic B-spline envelope).
#include "cosserat_ground.h"

#include <rodsim/capabilities.h>

#include <algorithm>
#include <cmath>
#include <numbers>

namespace rodsim::ground {

Schema MuscleTorque::schema() {
  Schema s{"muscle-torque",
           "Muscular activity of Gazzola et al. 2018 (Sec. IV.2): internal couples A(s, t) d at the interior nodes "
           "of one "
           "rod, equal and opposite on the two adjacent elements (no net couple), with the travelling wave of Eq. 33 "
           "A = ramp(t) beta(s) sin(2 pi t / T_m + k_m s + phi_m), s the rest arc length from node 0, and d a material "
           "director averaged over the two elements (d1: Gazzola et al.'s slithering couple of Eq. 35). beta is a "
           "clamped uniform cubic B-spline over the rest length whose control coefficients are `amplitudes` (control "
           "abscissae at the Greville points, the first at s = 0 and the last at s = L). With k_m > 0 the wave travels "
           "toward node 0."};
  s.required<std::string>("rod", "Rod the muscles act in.");
  s.required<std::vector<double>>("amplitudes",
                                  "B-spline control coefficients beta_0 .. beta_{N-1} of the envelope beta(s) (N >= 4; "
                                  "Gazzola et al. keep beta_0 = beta_{N-1} = 0: free ends), e.g. Gazzola et al.'s "
                                  "snake [0, 17.4, 48.5, 5.4, 14.7, 0].")
      .unit("N m");
  s.required<double>("period", "Activation period T_m.").unit("s").greater(0);
  s.add<double>("wave_number", 0.0, "k_m = 2 pi / lambda_m (0: a standing wave, lambda_m infinite).").unit("rad/m");
  s.add<double>("phase", 0.0, "Phase shift phi_m.").unit("rad");
  s.add<double>("ramp_up_time", 0.0,
                "The amplitude grows linearly from 0 at t = 0 to full at t = ramp_up_time (0: full from the start).")
      .unit("s")
      .atLeast(0);
  s.add<std::string>("director", "d1",
                     "Material director the couples act along (d1: normal to the ground for a rod built along the "
                     "ground, Gazzola et al.'s slithering; d2: the other bending direction; d3: twist).")
      .choices({"d1", "d2", "d3"});
  return s;
}

MuscleTorque::MuscleTorque(const Params& p)
    : Force(p),
      rod_name_(p.string("rod")),
      beta_coef_(p.reals("amplitudes")),
      period_(p.real("period")),
      wave_number_(p.real("wave_number")),
      phase_(p.real("phase")),
      ramp_(p.real("ramp_up_time")) {
  if (beta_coef_.size() < 4)
    throw ParamError("amplitudes", "a cubic B-spline needs at least 4 control coefficients; got " +
                                       std::to_string(beta_coef_.size()));
  for (double b : beta_coef_)
    if (!std::isfinite(b)) throw ParamError("amplitudes", "every amplitude must be finite");
  const std::string d = p.string("director");
  director_ = d == "d2" ? 1 : d == "d3" ? 2 : 0;
}

// Cox-de Boor on the clamped uniform knot vector [0,0,0,0, 1/m, .., (m-1)/m, 1,1,1,1], m = N - 3.
double MuscleTorque::bspline(const std::vector<double>& c, double u) {
  const int N = static_cast<int>(c.size()), m = N - 3;
  u = std::clamp(u, 0.0, 1.0);
  auto knot = [&](int i) { return std::clamp(double(i - 3) / m, 0.0, 1.0); };
  int span = std::min(static_cast<int>(std::floor(u * m)), m - 1) + 3;  // knot[span] <= u < knot[span + 1]
  // de Boor's algorithm on the four coefficients c[span-3 .. span].
  double d[4];
  for (int j = 0; j < 4; ++j) d[j] = c[span - 3 + j];
  for (int r = 1; r <= 3; ++r)
    for (int j = 3; j >= r; --j) {
      const int i = span - 3 + j;
      const double lo = knot(i), hi = knot(i + 4 - r);
      const double a = hi > lo ? (u - lo) / (hi - lo) : 0.0;
      d[j] = (1 - a) * d[j - 1] + a * d[j];
    }
  return d[3];
}

void MuscleTorque::bind(World& world) {
  rod_ = &resolveRod(world, rod_name_, "rod");
  refuseClosedRods({rod_}, "rod", "the muscle-torque force");
  const int nn = rod_->numNodes();
  // Rest arc length of each node from the initial centreline (the rest lengths of a Cosserat rod).
  Vec q0(rod_->numDofs());
  rod_->initialDofs(q0);
  s_.assign(nn, 0.0);
  for (int i = 1; i < nn; ++i)
    s_[i] = s_[i - 1] + (q0.segment<3>(rod_->positionDof(i)) - q0.segment<3>(rod_->positionDof(i - 1))).norm();
  const double L = s_.back();
  beta_.assign(nn, 0.0);
  for (int i = 0; i < nn; ++i) beta_[i] = bspline(beta_coef_, s_[i] / L);
  // sin(w t + k s_i + phi) = sin(w t + phi) cos(k s_i) + cos(w t + phi) sin(k s_i): one sin and one cos
  // per evaluation instead of one sin per node.
  cos_ks_.assign(nn, 0.0);
  sin_ks_.assign(nn, 0.0);
  for (int i = 0; i < nn; ++i) cos_ks_[i] = std::cos(wave_number_ * s_[i]), sin_ks_[i] = std::sin(wave_number_ * s_[i]);
  dir_.assign(rod_->numEdges(), Vec3::Zero());
  couple_.assign(rod_->numEdges(), Vec3::Zero());
}

void MuscleTorque::addForce(const EvalContext& ctx, Vec& f) {
  const double t = ctx.t;
  if (t < 0) return;
  const double ramp = ramp_ > 0 ? std::min(1.0, t / ramp_) : 1.0;
  const double scale = ctx.load_scale * ramp;
  if (scale == 0.0) return;
  const int ne = rod_->numEdges();
  for (int e = 0; e < ne; ++e) {
    Vec3 d3, d1, d2;
    rod_->materialFrame(e, d3, d1, d2);
    dir_[e] = director_ == 0 ? d1 : director_ == 1 ? d2 : d3;
    couple_[e].setZero();
  }
  const double wt = 2 * std::numbers::pi / period_ * t + phase_, swt = std::sin(wt), cwt = std::cos(wt);
  // Interior node i joins elements i-1 and i: the internal couple +C on element i, -C on element i-1
  // (the muscle couple enters like the internal torque tau_L, Sec. IV.2).
  for (int i = 1; i < ne; ++i) {
    const double A = scale * beta_[i] * (swt * cos_ks_[i] + cwt * sin_ks_[i]);  // Eq. 33
    Vec3 d = dir_[i - 1] + dir_[i];
    const double dn = d.norm();
    if (!(dn > 0)) continue;
    const Vec3 C = (A / dn) * d;  // Eq. 35: A along the (averaged) director
    couple_[i] += C;
    couple_[i - 1] -= C;
  }
  auto fr = f.segment(rod_->dofOffset(), rod_->numDofs());
  rod_->addNodeTorques(couple_.front().data(), fr);  // addNodeTorque(e, couple_[e], fr) for every e
}

}  // namespace rodsim::ground
