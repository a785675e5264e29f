// AlartCurnierContact::findOverlaps against all pairs on a random pile; rod_rod = false reports the
// obstacle overlaps only.
#include "ac_contact.h"
#include "overlap_checks.h"

#include <doctest/doctest.h>

using namespace rodsim;
using namespace rodsim::testing;
using rodsim::ac::AlartCurnierContact;

TEST_CASE("alart-curnier findOverlaps: every overlapping edge pair and node in the floor of a random pile") {
  for (unsigned seed : {1u, 2u}) {
    CAPTURE(seed);
    rodsim::test::OverlapPile pile;
    rodsim::test::buildPile(pile, 30, 12, seed);
    auto& c = pile.world.addContact<AlartCurnierContact>(makeParams(AlartCurnierContact::schema(), {}));
    pile.world.finalize();
    rodsim::test::checkOverlaps(c, pile);
  }
}

TEST_CASE("alart-curnier findOverlaps with rod_rod = false: nodes in obstacles only") {
  rodsim::test::OverlapPile pile;
  rodsim::test::buildPile(pile, 30, 12, 1);
  auto& c = pile.world.addContact<AlartCurnierContact>(
      makeParams(AlartCurnierContact::schema(), {{"rod_rod", false}}));
  pile.world.finalize();
  std::vector<Overlap> found;
  c.findOverlaps(pile.world.q(), found);
  int floor = 0;
  for (const auto& [key, gap] : pile.expected) floor += std::get<3>(key) < 0;
  CHECK(floor > 0);
  CHECK(static_cast<int>(found.size()) == floor);
  for (const Overlap& o : found) CHECK(o.edge_b == -1);
}
