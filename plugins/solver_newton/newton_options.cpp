#include "newton_options.h"

#include "sparse_assembly.h"  // LinearSolver::names, parse

#include <rodsim/capabilities.h>

#include <cstdio>
#include <stdexcept>

namespace rodsim::newton {

std::string formatNumber(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", x);
  return buf;
}

// ------------------------------------------------------------------------------------ options

void NewtonOptions::declare(Schema& s, bool impulse_contacts) {
  // What Newton on M q'' = F needs of the others (checked by the kernel before a run).
  s.require(ComponentKind::Rod, {RodStiffness::kInterfaceId},
            "Newton needs the Hessian of every rod's elastic energy (both shipped rod models have one); a rod "
            "model without it runs under an explicit solver (position-verlet or pefrl).");
  if (impulse_contacts)
    s.require(ComponentKind::Contact, {ForceContact::kInterfaceId, LinearizedImpulseContact::kInterfaceId},
              "Newton adds contact as forces with a Hessian (imc, ipc) or solves impulses with its linearized "
              "system (alart-curnier).");
  else
    // The midpoint rule damps nothing: with force contacts taken at the step's end (implicit_midpoint.cpp)
    // a rope dropped across a bar onto a floor (rope_over_bar, dt = 1 ms, default parameters) runs with
    // ipc and spring-dashpot but keeps 1-3 % of its impact's kinetic energy after 0.6 s, where every
    // other solver is at rest (0.03-0.6 %), and imc on DER rods fails at the first impact (README.md,
    // "implicit-midpoint"). Refused up front: no component provides this capability.
    s.require(ComponentKind::Contact, {"contact-midpoint-stable"},
              "The implicit midpoint rule does not damp impacts: a rope dropped across a bar onto a floor does not "
              "come to rest at the time step the rods need without contact (with imc on DER rods the first impact "
              "fails), and alart-curnier's impulses solve a backward-Euler step. For a second-order scheme with "
              "contact use implicit-bdf2 (L-stable: it damps impacts and unresolved stiff modes); or implicit-euler.");
  s.add<double>("tolerance", 1e-8,
                "Converged when the free-DOF force residual norm |R_free| is below this.")
      .unit("N").greater(0);
  s.add<double>("relative_tolerance", 1e-10,
                "Also converged when |R_free| <= relative_tolerance * force scale, the force scale "
                "being the largest of |R_free| at the initial guess and |M a|, |F| over all DOFs "
                "(supports included) at the current iterate; 0 disables it.")
      .atLeast(0).less(1);
  s.add<int>("max_iterations", 50, "Newton iterations (linear solves) allowed per solve.")
      .range(1, 1e6);
  s.add<bool>("line_search", true,
              "Goldstein-Price line search on 1/2 |R_free|^2 (Tong et al. 2023, SI Algorithm 1); false: "
              "full Newton steps (still capped by barrier contacts).");
  s.add<double>("line_search_m1", 0.1,
                "Sufficient-decrease constant m1: accept when m2 alpha phi'(0) <= phi(alpha) - "
                "phi(0) <= m1 alpha phi'(0).")
      .greater(0).less(1);
  s.add<double>("line_search_m2", 0.9, "Curvature constant m2 of the Goldstein-Price test (> m1).")
      .greater(0).less(1);
  s.add<double>("line_search_alpha_min", 1e-3,
                "Smallest step fraction: bisection stops when the bracket is narrower, and the "
                "step taken is never shorter (unless a barrier contact caps it).")
      .greater(0).atMost(1);
  s.add<double>("line_search_alpha_max", 2.0, "Largest step fraction tried (upper end of the bracket).")
      .atLeast(1);
  s.add<int>("line_search_max_trials", 100, "Force evaluations allowed per line search.").range(1, 1e6);
  s.add<int>("line_search_watchdog", 4,
             "Watchdog: full Newton steps are taken without the line search test as long as one "
             "of this many consecutive steps brings phi below the sufficient-decrease bound of "
             "the reference point; otherwise the solver returns to that point and runs the line "
             "search there. 0: the plain line search at every iteration (SI Algorithm 1).")
      .range(0, 1e6);
  s.add<std::string>("linear_solver", "auto",
                     "Linear solver: auto (LDLT while the Jacobian is symmetric: band, envelope, "
                     "SimplicialLDLT or CHOLMOD supernodal by its pattern; otherwise UMFPACK LU, or "
                     "on wide patterns of 2000+ rows GMRES on the Cholesky of its symmetric part), "
                     "umfpack (LU, unsymmetric-safe), sparselu (Eigen SparseLU), ldlt (LDLT, "
                     "symmetric Jacobians only).")
      .choices(LinearSolver::names());
  s.add<double>("levenberg_shift", 1e-8,
                "First diagonal shift, relative to mean |diag J|, added when the Jacobian is "
                "singular (or, for the static solver, indefinite along the Newton step).")
      .greater(0);
  s.add<int>("levenberg_retries", 6, "Shifted refactorizations tried; each multiplies the shift by 100.")
      .range(0, 50);
}

NewtonOptions NewtonOptions::fromParams(const Params& p) {
  NewtonOptions o;
  o.tolerance = p.real("tolerance");
  o.relative_tolerance = p.real("relative_tolerance");
  o.max_iterations = static_cast<int>(p.integer("max_iterations"));
  o.line_search = p.boolean("line_search");
  o.m1 = p.real("line_search_m1");
  o.m2 = p.real("line_search_m2");
  if (!(o.m1 < o.m2))
    throw ParamError("line_search_m2", "line_search_m2 (" + formatNumber(o.m2) +
                                           ") must be larger than line_search_m1 (" +
                                           formatNumber(o.m1) + ")");
  o.alpha_min = p.real("line_search_alpha_min");
  o.alpha_max = p.real("line_search_alpha_max");
  o.max_trials = static_cast<int>(p.integer("line_search_max_trials"));
  o.watchdog = static_cast<int>(p.integer("line_search_watchdog"));
  o.linear_solver = p.string("linear_solver");
  try {
    LinearSolver::parse(o.linear_solver);
  } catch (const std::invalid_argument& e) {
    throw ParamError("linear_solver", e.what());
  }
  o.levenberg_shift = p.real("levenberg_shift");
  o.levenberg_retries = static_cast<int>(p.integer("levenberg_retries"));
  return o;
}

}  // namespace rodsim::newton
