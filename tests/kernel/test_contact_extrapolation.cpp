// The World's ContactExtrapolation (SDK 1.9): with factor s the force contacts are taken at
// q_c = q_s + s (q - q_s), and the World's force, stiffness and potential energy are F_c(q_c),
// s K_c(q_c) and E_c(q_c) / s beside the rods' and forces' terms at q. Checked here for every force
// contact model against the plain evaluation at q_c and against central differences: a wrong factor
// is what would slow the implicit midpoint's Newton solves (implicit_midpoint.cpp) to linear
// convergence, or mislead its energy line search.
#include <rodsim/kernel/registry.h>
#include <rodsim/kernel/scene.h>
#include <rodsim/kernel/world.h>

#include <doctest/doctest.h>

#include <Eigen/SparseCore>

#include <limits>
#include <random>
#include <utility>
#include <string>

using namespace rodsim;
using namespace rodsim::kernel;

namespace {

// A rope lying across a clamped bar at `gap` (m), 0.1 m above a floor, moving slowly: the crossing is
// inside the force band of the model (imc: |gap| < delta = 10 um, ipc: 0 < gap < d_hat = 100 um,
// spring-dashpot: gap < 0).
std::string ropeOnBar(const std::string& contact, double friction, double gap) {
  return R"([simulation]
duration = 0.01
dt = 0.001

[solver]
type = "implicit-euler"

[[rod]]
name = "bar"
model = "der"
nodes = 11
radius = 0.003
youngs_modulus = 1e9
geometry = { shape = "straight", start = [-0.05, 0, 0.1], end = [0.05, 0, 0.1] }

[[rod]]
name = "rope"
model = "der"
nodes = 21
radius = 0.001
youngs_modulus = 1e6
geometry = { shape = "straight", start = [0.002, -0.05, )" + std::to_string(0.104 + gap) + R"(], end = [0.002, 0.05, )" +
         std::to_string(0.104 + gap) + R"(] }
initial_velocity = [0.0005, 0.001, -0.0005]

[[force]]
type = "gravity"

[[constraint]]
name = "left"
type = "clamp"
rod = "bar"
nodes = [0, 1]

[[obstacle]]
name = "floor"
shape = "plane"
origin = [0, 0, 0]
normal = [0, 0, 1]

[[contact]]
name = "touch"
type = ")" + contact + R"("
friction = )" + std::to_string(friction) + "\n" + (gap < 0 ? "allow_initial_overlap = true\n" : "");
}

const TypeRegistry& plugins() {
  static TypeRegistry registry = [] {
    TypeRegistry r;
    loadPlugins(r, {});
    return r;
  }();
  return registry;
}

Eigen::MatrixXd denseStiffness(const StiffnessSink& sink, int n) {
  Eigen::SparseMatrix<double> K(n, n);
  K.setFromTriplets(sink.entries().begin(), sink.entries().end());
  return Eigen::MatrixXd(K);
}

struct Evaluation {
  Vec force;
  Eigen::MatrixXd stiffness;
  double energy = 0;
};

Evaluation evaluateAt(KernelWorld& world, const EvalContext& base, const Vec& q) {
  EvalContext ctx = base;
  ctx.q = &q;
  Evaluation e;
  StiffnessSink sink;
  world.evaluate(ctx, e.force, &sink);
  e.stiffness = denseStiffness(sink, world.numDofs());
  e.energy = world.potentialEnergy(ctx);
  return e;
}

}  // namespace

TEST_CASE("contact extrapolation: F_c(q_c), s K_c(q_c) and E_c(q_c)/s for every force contact model") {
  const std::pair<std::string, double> models[] = {{"imc", 5e-6}, {"ipc", 5e-6}, {"spring-dashpot", -3e-6}};
  for (const auto& entry : models) {
    // (no structured binding: clang 14 cannot capture one in CAPTURE's lambda)
    const std::string& model = entry.first;
    const double gap = entry.second;
    for (const double friction : {0.0, 0.3}) {
      CAPTURE(model);
      CAPTURE(friction);
      Scene scene = parseScene(SceneText{ropeOnBar(model, friction, gap), "<rope on bar>", "/tmp", "rope"}, {}, plugins());
      KernelWorld world(scene, plugins());
      const int n = world.numDofs();
      const double s = 2.0, dt = 1e-3, h = dt / s;
      const Vec q_s = world.q(), v_s = world.v();
      world.setContactExtrapolation(s);
      world.beginStep(h);
      EvalContext base;
      base.t = h;
      base.dt = h;
      base.q_start = &q_s;
      base.v_start = &v_s;
      // A configuration half a step on, moved by up to 1 um at random on the free DOFs.
      std::mt19937 rng(7);
      std::uniform_real_distribution<double> unit(-1, 1);
      Vec q = q_s + h * v_s;
      for (int i = 0; i < n; ++i)
        if (!world.fixedMask()[i]) q[i] += 1e-6 * unit(rng);
      const Evaluation at_q = evaluateAt(world, base, q);
      REQUIRE(world.contactStats().active > 0);  // the check means something only in contact

      // Against the plain evaluation: contacts at q_c, the rest at q.
      const Vec q_c = q_s + s * (q - q_s);
      Vec without_contacts;
      EvalContext plain = base;
      plain.q = &q;
      world.evaluateWithoutContacts(plain, without_contacts);
      world.setContactExtrapolation(1.0);
      plain.q = &q_c;
      plain.dt = s * h;
      plain.t = h + (s - 1) * h;
      Vec at_end, at_end_without_contacts;
      StiffnessSink plain_sink;
      world.evaluate(plain, at_end, &plain_sink);
      world.evaluateWithoutContacts(plain, at_end_without_contacts);
      const Vec contact_force = at_end - at_end_without_contacts;
      CHECK((at_q.force - without_contacts - contact_force).norm() <= 1e-9 * contact_force.norm());
      // The barrier's CCD bounds the contacts' own step (q_c, s dq) from the step's start.
      Vec dq = Vec::Zero(n);
      const Rod& rope = *world.findRod("rope");
      for (int k = 0; k < rope.numNodes(); ++k) dq[rope.dofOffset() + rope.positionDof(k) + 2] = -1e-4;  // into the bar
      const double plain_fraction = world.maxStepFraction(q_c, s * dq);
      world.setContactExtrapolation(s);
      CHECK(world.maxStepFraction(q, dq) == plain_fraction);
      if (model == "ipc") CHECK(plain_fraction < 1);

      // Against central differences of the force (K = -dF/dq) and, without friction, of the energy.
      Eigen::MatrixXd fd(n, n);
      const double eps = 1e-10;  // well inside imc's softplus band (delta / 15 ~ 7e-7 m)
      for (int j = 0; j < n; ++j) {
        Vec qp = q, qm = q;
        qp[j] += eps;
        qm[j] -= eps;
        fd.col(j) = -(evaluateAt(world, base, qp).force - evaluateAt(world, base, qm).force) / (2 * eps);
      }
      Eigen::MatrixXd free_block = at_q.stiffness, fd_free = fd;
      for (int i = 0; i < n; ++i)
        if (world.fixedMask()[i]) {
          free_block.row(i).setZero();
          free_block.col(i).setZero();
          fd_free.row(i).setZero();
          fd_free.col(i).setZero();
        }
      // Central differences over 2e-10 m: truncation (eps / band width)^2 ~ 1e-7, round-off ~ 1e-9.
      CHECK((free_block - fd_free).cwiseAbs().maxCoeff() <= 1e-5 * fd_free.cwiseAbs().maxCoeff());
      if (friction == 0.0) {
        Vec d(n);
        for (int i = 0; i < n; ++i) d[i] = world.fixedMask()[i] ? 0.0 : unit(rng);
        const double e_eps = 1e-10;
        const double slope = (evaluateAt(world, base, q + e_eps * d).energy - evaluateAt(world, base, q - e_eps * d).energy) /
                             (2 * e_eps);
        CHECK(slope == doctest::Approx(-at_q.force.dot(d)).epsilon(1e-5));
      }
      world.setContactExtrapolation(1.0);
    }
  }
}

TEST_CASE("contact extrapolation: factors below 1 or not finite are refused") {
  Scene scene = parseScene(SceneText{ropeOnBar("imc", 0.0, 5e-6), "<rope on bar>", "/tmp", "rope"}, {}, plugins());
  KernelWorld world(scene, plugins());
  CHECK_THROWS_AS(world.setContactExtrapolation(0.5), std::invalid_argument);
  CHECK_THROWS_AS(world.setContactExtrapolation(std::numeric_limits<double>::quiet_NaN()), std::invalid_argument);
  CHECK(world.contactExtrapolation() == 1.0);
}

