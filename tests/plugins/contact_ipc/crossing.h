// Two rods crossing at right angles, the configuration of the ipc unit tests (test_ipc_contact.cpp,
// test_ipc_startup.cpp): rod a along x at z = 0, rod b along y crossing it mid-edge.
#pragma once

#include <rodsim/testing/fake_world.h>

namespace rodsim::test::ipc_crossing {

constexpr double r = 1e-3, L = 4e-3;  // m: both rods' radius, and the scale of their edges

// Rod a along x at z = 0; rod b along y crossing it mid-edge at height 2r + gap (centerlines).
inline void addCrossing(testing::FakeWorld& w, double gap) {
  testing::SpringChain::Options a, b;
  a.points = testing::line(5, Vec3(-2 * L, 0, 0), Vec3(2 * L, 0, 0));
  b.points = testing::line(5, Vec3(0.3 * L, -2.3 * L, 2 * r + gap), Vec3(0.3 * L, 1.7 * L, 2 * r + gap));
  a.radius = b.radius = r;
  w.addRod<testing::SpringChain>("a", a);
  w.addRod<testing::SpringChain>("b", b);
}

}  // namespace rodsim::test::ipc_crossing
