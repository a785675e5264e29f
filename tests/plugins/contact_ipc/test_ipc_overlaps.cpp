// IpcContact::findOverlaps against all pairs on a random pile, and the refusal of
// allow_initial_overlap = true when the rods start interpenetrated (the barrier is undefined there).
#include "ipc_contact.h"
#include "overlap_checks.h"

#include <doctest/doctest.h>

#include <string>

using namespace rodsim;
using namespace rodsim::testing;
using rodsim::ipc::IpcContact;

TEST_CASE("ipc findOverlaps: every overlapping edge pair and node in the floor of a random pile, as all pairs find them") {
  for (unsigned seed : {1u, 2u}) {
    CAPTURE(seed);
    rodsim::test::OverlapPile pile;
    rodsim::test::buildPile(pile, 30, 12, seed);
    auto& c = pile.world.addContact<IpcContact>(makeParams(IpcContact::schema(), {}));
    pile.world.finalize();
    rodsim::test::checkOverlaps(c, pile);
  }
}

TEST_CASE("ipc refuses allow_initial_overlap = true on overlapping rods, accepts it on separated ones") {
  for (double z_b : {3e-3, 6e-3}) {  // radius 2 mm: centre lines 3 mm apart overlap, 6 mm do not
    CAPTURE(z_b);
    FakeWorld w;
    SpringChain::Options a, b;
    a.points = line(5, Vec3(-0.02, 0, 0), Vec3(0.02, 0, 0));
    b.points = line(5, Vec3(0.005, -0.025, z_b), Vec3(0.005, 0.015, z_b));  // crossing mid-edge on both
    a.radius = b.radius = 2e-3;
    w.addRod<SpringChain>("a", a);
    w.addRod<SpringChain>("b", b);
    w.addContact<IpcContact>(makeParams(IpcContact::schema(), {{"allow_initial_overlap", true}}));
    if (z_b < 4e-3) {
      try {
        w.finalize();
        FAIL("no ParamError");
      } catch (const ParamError& e) {
        CHECK(e.key() == "allow_initial_overlap");
        const std::string what = e.what();
        CHECK(what.find("ipc cannot start from overlapping rods") != std::string::npos);
        CHECK(what.find("rods 'a' edge 2 and 'b' edge 2, by 1 mm") != std::string::npos);
      }
    } else {
      CHECK_NOTHROW(w.finalize());
    }
  }
}
