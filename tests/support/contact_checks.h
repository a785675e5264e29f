// Shared by the contact-model tests: a world with one obstacle, the context a contact sees in a
// step, its force at a configuration, and the check of its stiffness K = -dF/dq against finite
// differences of that force.
#pragma once

#include <rodsim/testing/fake_world.h>
#include "finite_differences.h"

#include <rodsim/sdk.h>

#include <Eigen/Core>

namespace rodsim::test {

// FakeWorld with one obstacle (a plane unless the test shapes it otherwise).
class ObstacleWorld : public testing::FakeWorld {
 public:
  Obstacle body;
  int numObstacles() const override { return 1; }
  const Obstacle& obstacle(int) const override { return body; }
};

inline Eigen::MatrixXd dense(const StiffnessSink& K, int n) {
  Eigen::MatrixXd M = Eigen::MatrixXd::Zero(n, n);
  for (const auto& t : K.entries()) M(t.row(), t.col()) += t.value();
  return M;
}

// A step of dt from q_start with velocities v_start: the world is put at q_start and told the step
// begins; the returned context points at both (they must outlive it).
inline EvalContext startStep(testing::FakeWorld& w, const Vec& q_start, const Vec& v_start, double dt) {
  w.q() = q_start;
  w.beginStep(dt);
  EvalContext ctx;
  ctx.dt = dt;
  ctx.q_start = &q_start;
  ctx.v_start = &v_start;
  return ctx;
}

template <class C>
Vec contactForce(C& c, const EvalContext& ctx0, const Vec& q) {
  EvalContext ctx = ctx0;
  ctx.q = &q;
  Vec f = Vec::Zero(q.size());
  const Vec no_other_force = Vec::Zero(q.size());
  c.addForce(ctx, no_other_force, f);
  return f;
}

// |K + dF/dq| / |dF/dq| at q, dF/dq by central differences with step h.
template <class C>
double stiffnessError(C& c, EvalContext ctx, const Vec& q, double h) {
  StiffnessSink K;
  ctx.q = &q;
  c.addStiffness(ctx, K);
  const Eigen::MatrixXd J = fdJacobian([&](const Vec& y) { return contactForce(c, ctx, y); }, q, h);
  return relErr(dense(K, static_cast<int>(q.size())), -J);
}

}  // namespace rodsim::test
