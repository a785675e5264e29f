// The anchor spring's derivatives checked with the SDK's test kit (installed with rodsim:
// <rodsim/testing/fake_world.h>, <rodsim/testing/derivative_checks.h>), as an out-of-tree plugin's
// own test would do it. Exit status 0 when every check holds.
#include "anchor_spring.cpp"  // the plugin's class, compiled into this test

#include <rodsim/testing/derivative_checks.h>
#include <rodsim/testing/fake_world.h>

#include <cstdio>

int main() {
  using namespace rodsim::testing;
  FakeWorld world;
  SpringChain::Options chain;
  chain.points = line(5, rodsim::Vec3(0, 0, 0), rodsim::Vec3(1, 0, 0));
  world.addRod<SpringChain>("beam", chain);
  auto& spring = world.addForce<AnchorSpring>(makeParams(
      AnchorSpring::schema(),
      {{"rod", std::string("beam")}, {"node", std::int64_t{-1}}, {"anchor", std::vector<double>{1.2, 0.3, -0.4}},
       {"stiffness", 2.5}}));
  world.finalize();
  // A configuration away from the rest state, so that every term is exercised.
  rodsim::Vec q = world.q();
  for (int i = 0; i < q.size(); ++i) q[i] += 0.05 * std::sin(1.7 * i);
  rodsim::EvalContext ctx;
  ctx.dt = 1e-3;
  ctx.q_start = &world.q();
  ctx.v_start = &world.v();
  // E is quadratic: central differences are exact up to round-off, ~1e-10 with h = 1e-6.
  const DerivativeErrors e = checkForce(spring, ctx, q, 1e-6);
  std::printf("anchor-spring: force vs energy %.2e, stiffness vs force %.2e, asymmetry %.2e\n", e.force, e.stiffness,
              e.symmetry);
  return e.force < 1e-8 && e.stiffness < 1e-8 && e.symmetry == 0.0 ? 0 : 1;
}
