// rodsim-fclib: solves FCLIB (.hdf5) and Siconos (.dat) friction-contact problems with the
// Alart-Curnier nonsmooth Newton solver and prints iterations, time and the natural-map residual.
//
//   rodsim-fclib FILE... [--tol 1e-8] [--max-iter 200] [--no-proximal] [--no-line-search]
//                        [--rho VALUE] [--guess] [--csv]
// Exit status: 0 every problem converged, 1 some did not, 2 bad input.
#include "ac_solver.h"
#ifdef RODSIM_AC_HAVE_FCLIB
#include "ac_fclib.h"
#endif

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using namespace rodsim::ac;

namespace {

void usage() {
  std::fprintf(stderr,
               "usage: rodsim-fclib FILE... [--tol T] [--max-iter N] [--no-proximal] [--no-line-search] "
               "[--rho R] [--guess] [--csv]\n"
               "  FILE: FCLIB .hdf5 (local or global) or Siconos .dat (local, or global GFC3D)\n");
}

Problem load(const std::string& path, Vec* guess) {
#ifdef RODSIM_AC_HAVE_FCLIB
  if (isHdf5(path)) return readFclib(path, guess);
#else
  (void)guess;
  if (path.size() > 5 && path.substr(path.size() - 5) == ".hdf5")
    throw std::runtime_error("this rodsim-fclib was built without libfclib (install libfclib-dev and rebuild)");
#endif
  try {
    return readSiconosDat(path, false);
  } catch (const std::exception& local_error) {
    try {
      return readSiconosDat(path, true);
    } catch (const std::exception&) {
      throw std::runtime_error(local_error.what());
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  bool csv = false, use_guess = false;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](const char* name) -> double {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "rodsim-fclib: %s needs a value\n", name);
        std::exit(2);
      }
      char* end = nullptr;
      const double v = std::strtod(argv[++i], &end);
      if (!end || *end) {
        std::fprintf(stderr, "rodsim-fclib: %s: '%s' is not a number\n", name, argv[i]);
        std::exit(2);
      }
      return v;
    };
    if (a == "--tol") {
      opt.tolerance = value("--tol");
      if (!(opt.tolerance > 0)) return std::fprintf(stderr, "rodsim-fclib: --tol must be > 0\n"), 2;
    } else if (a == "--max-iter") {
      opt.max_iterations = static_cast<int>(value("--max-iter"));
      if (opt.max_iterations < 1) return std::fprintf(stderr, "rodsim-fclib: --max-iter must be >= 1\n"), 2;
    } else if (a == "--rho") {
      opt.rho = value("--rho");
      if (!(opt.rho > 0)) return std::fprintf(stderr, "rodsim-fclib: --rho must be > 0\n"), 2;
    } else if (a == "--no-proximal") {
      opt.proximal = false;
    } else if (a == "--no-line-search") {
      opt.line_search = false;
    } else if (a == "--guess") {
      use_guess = true;
    } else if (a == "--csv") {
      csv = true;
    } else if (a == "-h" || a == "--help") {
      usage();
      return 0;
    } else if (!a.empty() && a[0] == '-') {
      std::fprintf(stderr, "rodsim-fclib: unknown option '%s'\n", a.c_str());
      usage();
      return 2;
    } else {
      files.push_back(a);
    }
  }
  if (files.empty()) {
    usage();
    return 2;
  }
  if (csv) std::printf("file,kind,contacts,iterations,prox_iterations,reduce_s,solve_s,ac_norm,rel_residual,abs_residual,status,dofs,nu\n");
  bool all = true;
  for (const auto& path : files) {
    Problem p;
    Vec r;
    Vec guess;
    double reduce_s = 0;
    try {
      p = load(path, use_guess ? &guess : nullptr);
      const auto t0 = std::chrono::steady_clock::now();
      reduceGlobal(p);
      reduce_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "rodsim-fclib: %s: %s\n", path.c_str(), e.what());
      return 2;
    }
    Solver solver(opt);
    solver.setProblem(p.W, p.q, p.mu);
    r.setZero(3 * p.contacts);
    if (use_guess && guess.size() == r.size()) r = guess;
    const Result res = solver.solve(r);
    all = all && res.converged;
    std::string name = path.substr(path.find_last_of('/') + 1);
    const char* kind = p.global ? "global" : "local";
    // nu = 3 n / m (Bertails-Descoubes et al. 2011, Sec. 4.4.2) for global problems, m = size of M;
    // unknown for local ones.
    const std::string dofs = p.global ? std::to_string(p.M.rows()) : "";
    const std::string nu = p.global && p.M.rows() > 0 ? std::to_string(3.0 * p.contacts / p.M.rows()) : "";
    if (csv)
      std::printf("%s,%s,%d,%d,%d,%.6f,%.6f,%.3e,%.3e,%.3e,%s,%s,%s\n", name.c_str(), kind, p.contacts, res.iterations,
                  res.prox_iterations, reduce_s, res.time_s, res.ac_norm, res.residual.rel, res.residual.abs,
                  res.converged ? "converged" : "FAILED", dofs.c_str(), nu.c_str());
    else
      std::printf("%s (%s, %d contacts): %s, %d Newton iterations (%d proximal), time %.4f s%s, "
                  "natural-map residual rel %.3e abs %.3e, |f_AC| %.3e\n",
                  name.c_str(), kind, p.contacts, res.converged ? "converged" : "NOT CONVERGED", res.iterations,
                  res.prox_iterations, res.time_s,
                  p.global ? (" (+ " + std::to_string(reduce_s).substr(0, 6) + " s reduction)").c_str() : "",
                  res.residual.rel, res.residual.abs, res.ac_norm);
  }
  return all ? 0 : 1;
}
