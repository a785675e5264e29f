// The parameters of the Newton solvers (implicit-euler and static), declared once for both schemas.
#pragma once

#include <rodsim/params.h>

#include <string>

namespace rodsim::newton {

struct NewtonOptions {
  double tolerance = 1e-8;           // N, absolute bound on |R_free|
  double relative_tolerance = 1e-10;  // times the force scale (see README)
  int max_iterations = 50;           // linear solves per Newton solve
  bool line_search = true;
  double m1 = 0.1, m2 = 0.9;        // Goldstein-Price constants (SI Algorithm 1)
  double alpha_min = 1e-3, alpha_max = 2.0;
  int max_trials = 100;
  int watchdog = 4;  // relaxed full steps before falling back to the line search; 0: never
  std::string linear_solver = "umfpack";
  double levenberg_shift = 1e-8;  // first shift, relative to mean |diag J|
  int levenberg_retries = 6;      // each retry multiplies the shift by 100
  // One Newton step, taken in full and accepted (linearly implicit Euler); set by implicit-euler's
  // `scheme`, not declared by declare().
  bool linearized = false;

  // Declares the parameters above in a solver schema, and reads them back. With impulse_contacts
  // false the contact requirement names only force contacts (implicit-midpoint: an impulse contact's
  // linearized system is a backward-Euler step's, see README.md).
  static void declare(Schema& s, bool impulse_contacts = true);
  static NewtonOptions fromParams(const Params& p);
};

// x with 6 significant digits, for messages.
std::string formatNumber(double x);

}  // namespace rodsim::newton
