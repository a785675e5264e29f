// clamp, rotate and translate on a cosserat rod: an edge whose two nodes are listed has its whole frame
// prescribed (Rod::frameDofs: the element's three rotation DOFs), so `clamp` on nodes [0, 1] is the
// clamped end it is on a DER rod (plugins/constraints/README.md, table).
#include "cosserat_rod.h"
#include "explicit_solvers.h"
#include <rodsim/testing/fake_world.h>
#include "loads.h"
#include "rigid_constraints.h"
#include <rodsim/geometry/so3.h>

#include <doctest/doctest.h>

#include "expect_param_error.h"

#include <Eigen/Geometry>

using namespace rodsim;
using rodsim::constraints::Clamp;
using rodsim::constraints::Rotate;
using rodsim::constraints::Translate;
using rodsim::testing::FakeWorld;
using rodsim::testing::makeParams;

namespace {

Params beamParams(const Vec3& end = Vec3(1, 0, 0)) {
  return makeParams(CosseratRod::schema(), {{"nodes", 11},
                                            {"radius", 0.05},
                                            {"density", 1000.0},
                                            {"youngs_modulus", 1e6},
                                            {"shear_modulus", 1e4},
                                            {"geometry.shape", std::string("straight")},
                                            {"geometry.start", toValue(Vec3(0, 0, 0))},
                                            {"geometry.end", toValue(end)},
                                            {"rest_shape", std::string("straight")}},
                    "beam");
}

Params nodes(const Schema& s, std::vector<int> n, std::initializer_list<std::pair<std::string, Value>> extra = {}) {
  Params p = makeParams(s, extra);
  p.set("rod", toValue(std::string("beam")));
  p.set("nodes", toValue(n));
  return p;
}

}  // namespace

TEST_CASE("clamp on nodes [0, 1] of a cosserat rod prescribes the three rotation DOFs of element 0 and holds its frame under a load") {
  for (const char* scheme : {"position-verlet", "pefrl"}) {
    CAPTURE(scheme);
    FakeWorld w;
    auto& rod = w.addRod<CosseratRod>(beamParams());
    auto& clamp = w.addConstraint<Clamp>(nodes(Clamp::schema(), {0, 1}));
    w.addForce<loads::PointLoad>(makeParams(loads::PointLoad::schema(), {{"rod", std::string("beam")}, {"node", -1},
                                                                        {"force", toValue(Vec3(0, 0.3, -0.5))},
                                                                        {"torque", toValue(Vec3(0.02, 0, 0))}}));
    w.finalize();
    const int r = rod.rotationDof(0);
    CHECK(clamp.edges() == std::vector<int>{0});
    CHECK(rod.frameDofs(0) == std::vector<int>{r, r + 1, r + 2});
    CHECK(clamp.dofs() == std::vector<int>{0, 1, 2, 3, 4, 5, r + 2, r, r + 1});  // positions, twist, bending
    CHECK(clamp.heldFrameDofs() == std::vector<int>{r, r + 1});

    const Mat3 Q0 = rod.frame(0), Q1 = rod.frame(1);
    const Vec3 x1 = w.q().segment<3>(3), tip0 = w.q().segment<3>(rod.positionDof(10));
    Vec q = w.q();
    q.segment<3>(r) = Vec3(0.1, -0.2, 0.3);  // whatever comes in, the clamp writes phi = 0
    w.prescribe(0.0, q);
    CHECK(q.segment<3>(r).norm() < 1e-15);

    auto run = [&](auto&& solver) {
      for (int n = 0; n < 400; ++n) {
        const StepReport rep = solver.step(w, 2e-4);
        REQUIRE_MESSAGE(rep.ok, rep.message);
      }
    };
    if (std::string(scheme) == "pefrl")
      run(explicit_solver::Pefrl(makeParams(explicit_solver::Pefrl::schema(), {})));
    else
      run(explicit_solver::PositionVerlet(makeParams(explicit_solver::PositionVerlet::schema(), {})));
    // The load moved the rod, bent it next to the clamp (element 1 turned), but element 0 kept its
    // frame (committed and current) and nodes 0 and 1 their positions.
    CHECK((w.q().segment<3>(rod.positionDof(10)) - tip0).norm() > 1e-4);
    CHECK((rod.frame(1) - Q1).norm() > 1e-5);
    CHECK((rod.committedFrame(0) - Q0).norm() < 1e-13);
    CHECK((rod.frame(0) - Q0).norm() < 1e-13);
    CHECK(w.q().segment<3>(r).norm() < 1e-13);
    CHECK(w.q().segment<3>(0).norm() == 0.0);
    CHECK((w.q().segment<3>(3) - x1).norm() == 0.0);
    // The reaction on the clamped nodes balances the load and the inertia: a finite, nonzero force.
    const Vec3 f = w.lastResidual().segment<3>(0) + w.lastResidual().segment<3>(3);
    CHECK(f.allFinite());
    CHECK(f.norm() > 0.01);
  }
}

TEST_CASE("translate holds a cosserat frame; rotate spins it about an axis along d3 and refuses another axis") {
  {
    FakeWorld w;
    auto& rod = w.addRod<CosseratRod>(beamParams(Vec3(0, 0, 1)));
    auto& tr = w.addConstraint<Translate>(nodes(Translate::schema(), {-2, -1}, {{"velocity", toValue(Vec3(0.1, 0, 0))}}));
    w.finalize();
    CHECK(tr.edges() == std::vector<int>{9});
    const Mat3 Q0 = rod.frame(9);
    Vec q = w.q();
    q.segment<3>(rod.rotationDof(9)) = Vec3(0.01, 0.02, 0.03);
    w.prescribe(2.0, q);
    rod.setConfiguration(q);
    CHECK((rod.frame(9) - Q0).norm() < 1e-14);
    CHECK((q.segment<3>(rod.positionDof(10)) - Vec3(0.2, 0, 1)).norm() < 1e-14);
  }
  {
    FakeWorld w;
    auto& rod = w.addRod<CosseratRod>(beamParams(Vec3(0, 0, 1)));
    const double omega = 0.7;
    auto& rot = w.addConstraint<Rotate>(nodes(Rotate::schema(), {0, 1}, {{"axis", toValue(Vec3(0, 0, 2))},
                                                                          {"angular_velocity", toValue(omega)}}));
    w.finalize();
    CHECK(rot.dofs().size() == 9u);
    const Mat3 Q0 = rod.frame(0);
    Vec q = w.q();
    w.prescribe(1.5, q);
    rod.setConfiguration(q);
    const Mat3 R = Eigen::AngleAxisd(omega * 1.5, Vec3::UnitZ()).toRotationMatrix();
    CHECK((rod.frame(0) - Q0 * R.transpose()).norm() < 1e-12);  // d_k = R d_k0 (rows of Q)
  }
  FakeWorld w;
  w.addRod<CosseratRod>(beamParams(Vec3(0, 0, 1)));
  w.addConstraint<Rotate>(nodes(Rotate::schema(), {0, 1}, {{"axis", toValue(Vec3(1, 0, 0))}, {"angular_velocity", toValue(1.0)}}));
  rodsim::test::checkParamError([&] { w.finalize(); }, "axis", "not along the axis");
  FakeWorld pinned;  // one node about any axis: no frame involved
  pinned.addRod<CosseratRod>(beamParams(Vec3(0, 0, 1)));
  pinned.addConstraint<Rotate>(nodes(Rotate::schema(), {0}, {{"axis", toValue(Vec3(1, 0, 0))}, {"angular_velocity", toValue(1.0)}}));
  CHECK_NOTHROW(pinned.finalize());
}
