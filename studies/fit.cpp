// rodsim fit (docs/inverse.md): bounded nonlinear least squares with Ceres Solver over scene keys.
// Residuals r_k(p) = probe_j(t_k; p) - measured_j(t_k), the run's timeseries linearly interpolated
// at the data's times. Ceres sees one cost function of the scaled parameters u (u = x / |x0|, or
// u = ln x with log = true) so that every coordinate is O(1) whatever the units; its Jacobian is
// by central differences, (r(u + h e_i) - r(u - h e_i)) / 2h, and the 2n + 1 runs of a Jacobian
// go to the child-process engine as one batch (all cores). Every run is cached under DIR/runs by
// its --set values, so a point Ceres evaluates twice (the accepted trial point, then its
// Jacobian) runs once, and running the fit again reuses every finished run.
#include "fit.h"

#include "inverse.h"

#include <rodsim/kernel/installation.h>
#include <rodsim/kernel/output.h>
#include <rodsim/kernel/scene.h>

#include <ceres/ceres.h>
#include <Eigen/Dense>
#include <rodsim/process/spawn.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <map>

namespace fs = std::filesystem;

namespace rodsim::studies {

using namespace rodsim::kernel;

namespace {

constexpr const char* kUsage =
    "usage: rodsim fit FIT.toml [--output DIR] [--jobs N] [--quiet]\n"
    "       estimate scene keys from measured probe values by bounded least squares (Ceres); docs/inverse.md\n";

// The measured data: times and one column per probe, or a final shape (final.csv format).
struct FitData {
  std::string file;
  std::vector<double> t;
  std::vector<std::string> probes;
  std::vector<std::vector<double>> values;  // [probe][row]
  bool shape = false;                       // header rod,node,x,y,z: the centerline at the end of the run
  std::vector<std::string> rods;            // [row]
  std::vector<long> nodes;
  std::vector<std::array<double, 3>> xyz;
  std::size_t residuals() const { return shape ? 3 * xyz.size() : t.size() * probes.size(); }
};

// A final shape: rows rod,node,x,y,z as the run's final.csv writes them.
FitData readShape(const InverseFile& f, FitData d, const run_record::CsvTable& table) {
  d.shape = true;
  for (std::size_t r = 0; r < table.rows.size(); ++r) {
    const std::size_t row = table.lines[r];
    const auto& cells = table.rows[r];
    if (cells.size() != 5) throw InputError(fmt::format("{}:{}:1: {} cell(s), expected rod,node,x,y,z", d.file, row, cells.size()));
    if (std::find(f.rods.begin(), f.rods.end(), cells[0]) == f.rods.end())
      throw InputError(fmt::format("{}:{}:1: '{}' is not a rod of the scene {} (rods: {})", d.file, row, cells[0], f.scene,
                                   fmt::join(f.rods, ", ")));
    std::size_t col = cells[0].size() + 2;
    char* end = nullptr;
    const long node = std::strtol(cells[1].c_str(), &end, 10);
    if (cells[1].empty() || end != cells[1].c_str() + cells[1].size() || node < 0)
      throw InputError(fmt::format("{}:{}:{}: '{}' is not a node index (a whole number >= 0)", d.file, row, col, cells[1]));
    col += cells[1].size() + 1;
    std::array<double, 3> x{};
    for (int k = 0; k < 3; ++k) {
      const std::string& c = cells[static_cast<std::size_t>(2 + k)];
      x[static_cast<std::size_t>(k)] = std::strtod(c.c_str(), &end);
      if (c.empty() || end != c.c_str() + c.size() || !std::isfinite(x[static_cast<std::size_t>(k)]))
        throw InputError(fmt::format("{}:{}:{}: '{}' is not a finite number", d.file, row, col, c));
      col += c.size() + 1;
    }
    d.rods.push_back(cells[0]);
    d.nodes.push_back(node);
    d.xyz.push_back(x);
  }
  if (d.xyz.empty()) throw InputError(fmt::format("{}:2:1: no data rows", d.file));
  return d;
}

FitData readData(const InverseFile& f, const toml::node& node) {
  if (!node.is_string())
    throw InputError(fmt::format("{}: 'data' expects a string (a CSV path relative to the fit file), found {}", f.at(node.source()),
                                 describeNode(node)));
  FitData d;
  d.file = (fs::path(f.file).parent_path() / node.value<std::string>().value()).lexically_normal().string();
  std::error_code ec;
  if (!fs::exists(d.file, ec))
    throw InputError(fmt::format("{}: data '{}': cannot open {}", f.at(node.source()), node.value<std::string>().value(), d.file));
  // Bounded before it is read (issue 43): a regular file of at most 64 MiB, lines of at most 1 MiB.
  const run_record::CsvTable table = readCsv(d.file, kMaxDataBytes, "fit data file", false);
  if (table.header.empty()) throw InputError(fmt::format("{}:1:1: empty data file (expected a header t,PROBE,...)", d.file));
  const auto& header = table.header;
  if (header == std::vector<std::string>{"rod", "node", "x", "y", "z"}) return readShape(f, d, table);
  if (header.empty() || header[0] != "t")
    throw InputError(fmt::format("{}:1:1: the first column must be 't' (time; or a final shape: rod,node,x,y,z), found '{}'", d.file,
                                 header.empty() ? "" : header[0]));
  if (header.size() < 2) throw InputError(fmt::format("{}:1:1: no probe columns after 't'", d.file));
  std::size_t column = 1 + header[0].size() + 1;
  for (std::size_t c = 1; c < header.size(); ++c) {
    if (std::find(f.probes.begin(), f.probes.end(), header[c]) == f.probes.end()) {
      const std::string near = closestMatch(header[c], f.probes);
      throw InputError(fmt::format("{}:1:{}: column '{}' is not a probe of the scene {} (probes: {}{})", d.file, column, header[c], f.scene,
                                   f.probes.empty() ? "none" : fmt::format("{}", fmt::join(f.probes, ", ")),
                                   near.empty() ? "" : "; did you mean '" + near + "'?"));
    }
    if (std::find(d.probes.begin(), d.probes.end(), header[c]) != d.probes.end())
      throw InputError(fmt::format("{}:1:{}: column '{}' appears twice", d.file, column, header[c]));
    d.probes.push_back(header[c]);
    column += header[c].size() + 1;
  }
  d.values.resize(d.probes.size());
  for (std::size_t r = 0; r < table.rows.size(); ++r) {
    const std::size_t row = table.lines[r];
    const auto& cells = table.rows[r];
    if (cells.size() != header.size())
      throw InputError(fmt::format("{}:{}:1: {} cell(s), the header has {}", d.file, row, cells.size(), header.size()));
    std::size_t col = 1;
    for (std::size_t c = 0; c < cells.size(); ++c) {
      double v = 0;
      if (!run_record::parseCell(cells[c], v) || !std::isfinite(v))
        throw InputError(fmt::format("{}:{}:{}: '{}' is not a finite number", d.file, row, col, cells[c]));
      if (c == 0) {
        if (v < 0 || v > f.duration * (1 + 1e-12))
          throw InputError(fmt::format("{}:{}:1: time {} is outside the run [0, {}] (simulation.duration)", d.file, row, v, f.duration));
        if (!d.t.empty() && v <= d.t.back())
          throw InputError(fmt::format("{}:{}:1: times must increase ({} after {})", d.file, row, v, d.t.back()));
        d.t.push_back(v);
      } else {
        d.values[c - 1].push_back(v);
      }
      col += cells[c].size() + 1;
    }
  }
  if (d.t.empty()) throw InputError(fmt::format("{}:2:1: no data rows", d.file));
  return d;
}

// Scaled coordinate u of a physical value x, and back.
double toScaled(const InverseParameter& p, double x) { return p.log ? std::log(x) : x / std::abs(p.initial != 0 ? p.initial : p.upper - p.lower); }
double toPhysical(const InverseParameter& p, double u) { return p.log ? std::exp(u) : u * std::abs(p.initial != 0 ? p.initial : p.upper - p.lower); }
// dx/du.
double scaleOf(const InverseParameter& p, double u) { return p.log ? std::exp(u) : std::abs(p.initial != 0 ? p.initial : p.upper - p.lower); }

// Residuals and their Jacobian at scaled points, through the run cache.
class Residuals {
 public:
  Residuals(const InverseFile& f, const FitData& d, RunCache& cache, double step) : f_(f), d_(d), cache_(cache), step_(step) {
    for (const auto& p : f.parameters) lo_.push_back(toScaled(p, p.lower)), hi_.push_back(toScaled(p, p.upper));
  }
  std::size_t size() const { return d_.residuals(); }
  bool interrupted() const { return interrupted_; }

  // r(u), and J (row-major, size() x n) when `jacobian`. False when a run failed or was interrupted.
  bool evaluate(const std::vector<double>& u, std::vector<double>& r, std::vector<double>* jacobian) {
    const std::size_t n = u.size();
    std::vector<std::vector<double>> points{physical(u)};
    std::vector<double> plus(n), minus(n);  // the u coordinate used on each side
    if (jacobian)
      for (std::size_t i = 0; i < n; ++i) {
        // Central differences, one-sided at a bound (the runs must stay inside it).
        plus[i] = std::min(u[i] + step_, hi_[i]);
        minus[i] = std::max(u[i] - step_, lo_[i]);
        std::vector<double> up = u, down = u;
        up[i] = plus[i], down[i] = minus[i];
        points.push_back(physical(up));
        points.push_back(physical(down));
      }
    std::vector<RunResult> results;
    if (!cache_.run(points, results)) {
      interrupted_ = true;
      return false;
    }
    std::vector<std::vector<double>> res(points.size());
    for (std::size_t k = 0; k < points.size(); ++k) {
      if (!results[k].ok) {
        last_failure_ = results[k].reason;
        return false;
      }
      if (!residualsOf(results[k].dir, res[k])) return false;
    }
    r = res[0];
    if (jacobian) {
      const std::size_t m = size();
      jacobian->assign(m * n, 0.0);
      for (std::size_t i = 0; i < n; ++i) {
        const auto& rp = plus[i] == u[i] ? res[0] : res[1 + 2 * i];
        const auto& rm = minus[i] == u[i] ? res[0] : res[2 + 2 * i];
        const double h = plus[i] - minus[i];
        for (std::size_t k = 0; k < m; ++k) (*jacobian)[k * n + i] = h > 0 ? (rp[k] - rm[k]) / h : 0.0;
      }
    }
    return true;
  }

  std::vector<double> physical(const std::vector<double>& u) const {
    std::vector<double> x(u.size());
    for (std::size_t i = 0; i < u.size(); ++i) x[i] = toPhysical(f_.parameters[i], u[i]);
    // A point on a bound lands exactly on it (exp/log round-off would leave it just outside).
    for (std::size_t i = 0; i < u.size(); ++i) x[i] = std::clamp(x[i], f_.parameters[i].lower, f_.parameters[i].upper);
    return x;
  }
  const std::string& lastFailure() const { return last_failure_; }

  // Simulated minus measured, probe by probe, at the data's times (or node by node, x y z, of the
  // final shape).
  bool residualsOf(const fs::path& dir, std::vector<double>& r) {
    if (d_.shape) return shapeResiduals(dir, r);
    const Series s = readTimeseries(dir / "timeseries.csv");
    const std::vector<double>* t = s.column("t");
    if (!t || t->empty()) {
      last_failure_ = fmt::format("{}: no timeseries", (dir / "timeseries.csv").string());
      return false;
    }
    r.clear();
    for (std::size_t j = 0; j < d_.probes.size(); ++j) {
      const std::vector<double>* y = s.column(d_.probes[j]);
      if (!y) {
        last_failure_ = fmt::format("{}: no column {}", (dir / "timeseries.csv").string(), d_.probes[j]);
        return false;
      }
      for (std::size_t k = 0; k < d_.t.size(); ++k) r.push_back(interpolate(*t, *y, d_.t[k]) - d_.values[j][k]);
    }
    for (double v : r)
      if (!std::isfinite(v)) {
        last_failure_ = fmt::format("{}: non-finite probe values", dir.string());
        return false;
      }
    return true;
  }

  bool shapeResiduals(const fs::path& dir, std::vector<double>& r) {
    std::map<std::pair<std::string, long>, std::array<double, 3>> final_shape;
    const run_record::CsvTable table = readCsv(dir / "final.csv", run_record::kMaxRunCsvBytes, "run's final.csv", false);
    for (std::size_t k = 0; k < table.rows.size(); ++k) {
      const auto& cells = table.rows[k];
      std::array<double, 3> x{};
      if (cells.size() == 5 && run_record::parseCell(cells[2], x[0]) && run_record::parseCell(cells[3], x[1]) &&
          run_record::parseCell(cells[4], x[2]))
        final_shape[{cells[0], std::atol(cells[1].c_str())}] = x;
    }
    r.clear();
    for (std::size_t k = 0; k < d_.xyz.size(); ++k) {
      const auto it = final_shape.find({d_.rods[k], d_.nodes[k]});
      if (it == final_shape.end()) {
        last_failure_ = fmt::format("{}: no node {} of rod '{}' (data row {})", (dir / "final.csv").string(), d_.nodes[k], d_.rods[k], k + 2);
        return false;
      }
      for (std::size_t c = 0; c < 3; ++c) r.push_back(it->second[c] - d_.xyz[k][c]);
    }
    for (double v : r)
      if (!std::isfinite(v)) {
        last_failure_ = fmt::format("{}: non-finite positions", dir.string());
        return false;
      }
    return true;
  }

 private:
  const InverseFile& f_;
  const FitData& d_;
  RunCache& cache_;
  double step_;
  std::vector<double> lo_, hi_;
  bool interrupted_ = false;
  std::string last_failure_;
};

// Ceres' view: one residual block over the n scaled parameters; the Jacobian comes from a batch.
class BatchCost : public ceres::CostFunction {
 public:
  BatchCost(Residuals& r, int n) : r_(r) {
    set_num_residuals(static_cast<int>(r.size()));
    mutable_parameter_block_sizes()->push_back(n);
  }
  bool Evaluate(double const* const* parameters, double* residuals, double** jacobians) const override {
    const std::size_t n = static_cast<std::size_t>(parameter_block_sizes()[0]);
    const std::vector<double> u(parameters[0], parameters[0] + n);
    std::vector<double> r, J;
    const bool want = jacobians && jacobians[0];
    if (!r_.evaluate(u, r, want ? &J : nullptr)) return false;  // Ceres shrinks its step
    std::copy(r.begin(), r.end(), residuals);
    if (want) std::copy(J.begin(), J.end(), jacobians[0]);
    return true;
  }

 private:
  Residuals& r_;
};

struct IterationRow {
  int iteration;
  double cost, cost_change, gradient_max_norm, step_norm, trust_region_radius;
  bool successful;
  std::vector<double> x;
  std::size_t simulations;
  double seconds;
};

class Logger : public ceres::IterationCallback {
 public:
  Logger(const InverseFile& f, const double* u, const Residuals& r, const RunCache& cache, bool quiet)
      : f_(f), u_(u), r_(r), cache_(cache), quiet_(quiet), start_(std::chrono::steady_clock::now()) {}
  ceres::CallbackReturnType operator()(const ceres::IterationSummary& s) override {
    const std::vector<double> x = r_.physical(std::vector<double>(u_, u_ + f_.parameters.size()));
    rows.push_back({s.iteration, s.cost, s.cost_change, s.gradient_max_norm, s.step_norm, s.trust_region_radius,
                    s.step_is_successful, x, cache_.distinct(),
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count()});
    if (!quiet_) {
      std::vector<std::string> shown;
      for (std::size_t i = 0; i < x.size(); ++i) shown.push_back(fmt::format("{} = {:.8g}", f_.parameters[i].name(), x[i]));
      std::printf("rodsim fit: iteration %d: cost %.6g%s, %s (%zu simulations)\n", s.iteration, s.cost,
                  s.iteration > 0 && !s.step_is_successful ? " (step rejected)" : "", fmt::format("{}", fmt::join(shown, ", ")).c_str(),
                  cache_.distinct());
      std::fflush(stdout);
    }
    return r_.interrupted() ? ceres::SOLVER_ABORT : ceres::SOLVER_CONTINUE;
  }
  std::vector<IterationRow> rows;

 private:
  const InverseFile& f_;
  const double* u_;
  const Residuals& r_;
  const RunCache& cache_;
  bool quiet_;
  std::chrono::steady_clock::time_point start_;
};


}  // namespace

int fitCommand(const std::vector<std::string>& args, const std::string& executable) {
  InverseOptions o = parseInverseArgs(args, kUsage, "fit");
  TypeRegistry registry;
  loadPluginsFor(o.file, registry);
  const InverseFile f = loadInverseFile(o.file, registry, {"data", "max_iterations", "fd_step"}, "fit");
  const toml::node* data_node = f.root.get("data");
  if (!data_node) throw InputError(fmt::format("{}:1:1: missing required key 'data' (a CSV: t, then one column per probe)", f.file));
  const FitData data = readData(f, *data_node);
  int max_iterations = 50;
  if (const toml::node* n = f.root.get("max_iterations")) {
    if (!n->is_integer() || n->value<long long>().value() < 1 || n->value<long long>().value() > 10000)
      throw InputError(fmt::format("{}: 'max_iterations' expects a whole number from 1 to 10000, found {}", f.at(n->source()), describeNode(*n)));
    max_iterations = static_cast<int>(n->value<long long>().value());
  }
  double fd_step = 1e-3;  // in scaled units: a relative change of 1e-3 (truncation ~1e-6, far above the 10 digits of timeseries.csv)
  if (const toml::node* n = f.root.get("fd_step")) {
    fd_step = requireNumber(f, *n, "fd_step");
    if (fd_step <= 0 || fd_step > 0.1)
      throw InputError(fmt::format("{}: 'fd_step' must be in (0, 0.1] (a relative step), found {}", f.at(n->source()), fd_step));
  }

  const fs::path dir = o.output.empty() ? defaultStudyDir(o.file) : fs::path(o.output);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw InputError(fmt::format("cannot create the output directory '{}': {}", dir.string(), ec.message()));
  const std::size_t n = f.parameters.size();
  if (data.residuals() < n)
    throw InputError(fmt::format("{}: {} data value(s) for {} parameter(s): the problem is underdetermined", data.file, data.residuals(), n));

  holdStopSignals();  // validated: from here on an interruption is reported, not fatal
  // Under mpirun the ranks share each batch of runs (study_ranks.h); rank 0 writes and prints.
  const StudyRanks ranks(executable, "fit");
  if (!ranks.root()) o.quiet = true;
  const int jobs = ranks.size() > 1 && o.jobs <= 0 ? 1 : process::jobsOrCores(o.jobs);
  RunCache cache(f, dir, executable, jobs, true, "rodsim fit", registry);
  cache.share(ranks);
  Residuals residuals(f, data, cache, fd_step);
  std::vector<double> u(n);
  for (std::size_t i = 0; i < n; ++i) u[i] = toScaled(f.parameters[i], f.parameters[i].initial);
  if (!o.quiet)
    std::printf("rodsim fit: %zu parameter(s), %zu residual(s) (%s), %s -> %s\n", n, residuals.size(),
                data.shape ? fmt::format("{} node(s) x 3 of the final shape", data.xyz.size()).c_str()
                           : fmt::format("{} time(s) x {} probe(s)", data.t.size(), data.probes.size()).c_str(),
                (ranks.size() > 1 ? fmt::format("{} MPI ranks x {} job(s)", ranks.size(), jobs) : fmt::format("{} job(s)", jobs)).c_str(),
                dir.c_str());

  const auto start = std::chrono::steady_clock::now();
  BatchCost cost(residuals, static_cast<int>(n));  // outlives the problem, which does not own it
  ceres::Problem::Options problem_options;
  problem_options.cost_function_ownership = ceres::DO_NOT_TAKE_OWNERSHIP;
  ceres::Problem problem(problem_options);
  problem.AddResidualBlock(&cost, nullptr, u.data());
  for (std::size_t i = 0; i < n; ++i) {
    problem.SetParameterLowerBound(u.data(), static_cast<int>(i), toScaled(f.parameters[i], f.parameters[i].lower));
    problem.SetParameterUpperBound(u.data(), static_cast<int>(i), toScaled(f.parameters[i], f.parameters[i].upper));
  }
  ceres::Solver::Options options;
  options.trust_region_strategy_type = ceres::LEVENBERG_MARQUARDT;
  options.linear_solver_type = ceres::DENSE_QR;
  options.max_num_iterations = max_iterations;
  // Noise-free model data fit to round-off; the probes carry 10 significant digits.
  options.function_tolerance = 1e-12;
  options.parameter_tolerance = 1e-10;
  options.gradient_tolerance = 1e-16;
  options.num_threads = 1;  // the parallelism is in the batches of child runs
  options.logging_type = ceres::SILENT;
  options.update_state_every_iteration = true;  // the callback logs the current parameters
  Logger logger(f, u.data(), residuals, cache, o.quiet);
  options.callbacks.push_back(&logger);
  ceres::Solver::Summary summary;
  ceres::Solve(options, &problem, &summary);
  if (residuals.interrupted()) {
    if (ranks.root()) std::printf("rodsim fit: interrupted; run the same command again (finished runs under %s are reused)\n", (dir / "runs").c_str());
    return 3;
  }

  // Covariance at the estimate: s^2 (J^T J)^-1 in physical units, s^2 = 2 cost / (m - n).
  std::vector<double> r, J;
  const bool have_jacobian = residuals.evaluate(u, r, &J);
  if (residuals.interrupted()) return 3;
  const std::size_t m = residuals.size();
  const std::vector<double> x = residuals.physical(u);
  Eigen::MatrixXd cov = Eigen::MatrixXd::Constant(static_cast<Eigen::Index>(n), static_cast<Eigen::Index>(n),
                                                  std::numeric_limits<double>::quiet_NaN());
  double s2 = std::numeric_limits<double>::quiet_NaN(), final_cost = summary.final_cost;
  if (have_jacobian) {
    Eigen::MatrixXd Jp(static_cast<Eigen::Index>(m), static_cast<Eigen::Index>(n));
    for (std::size_t k = 0; k < m; ++k)
      for (std::size_t i = 0; i < n; ++i)
        Jp(static_cast<Eigen::Index>(k), static_cast<Eigen::Index>(i)) = J[k * n + i] / scaleOf(f.parameters[i], u[i]);
    final_cost = 0;
    for (double v : r) final_cost += 0.5 * v * v;
    if (m > n) {
      s2 = 2 * final_cost / static_cast<double>(m - n);
      const Eigen::MatrixXd JtJ = Jp.transpose() * Jp;
      Eigen::FullPivLU<Eigen::MatrixXd> lu(JtJ);
      if (lu.isInvertible()) cov = s2 * lu.inverse();
    }
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const std::size_t simulations = cache.distinct();

  // fit.json
  std::string json = "{\n  \"parameters\": {";
  for (std::size_t i = 0; i < n; ++i) {
    const auto& p = f.parameters[i];
    json += fmt::format("{}\n    \"{}\": {{\"value\": {}, \"std_error\": {}, \"initial\": {}, \"lower\": {}, \"upper\": {}, \"log\": {}}}",
                        i ? "," : "", jsonEscape(p.name()), jsonNumber(x[i]), jsonNumber(std::sqrt(cov(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(i)))),
                        jsonNumber(p.initial), jsonNumber(p.lower), jsonNumber(p.upper), p.log ? "true" : "false");
  }
  json += "\n  },\n  \"covariance\": [";
  for (std::size_t i = 0; i < n; ++i) {
    std::vector<std::string> row;
    for (std::size_t j = 0; j < n; ++j) row.push_back(jsonNumber(cov(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j))));
    json += fmt::format("{}[{}]", i ? ", " : "", fmt::join(row, ", "));
  }
  json += fmt::format("],\n  \"simulations\": {},\n  \"simulations_run\": {},\n  \"simulations_reused\": {},\n  \"iterations\": {},\n"
                      "  \"final_cost\": {},\n  \"residual_variance\": {},\n  \"residuals\": {},\n  \"rms_residual\": {},\n"
                      "  \"termination\": \"{}\",\n  \"message\": \"{}\",\n  \"wall_time_s\": {:.3f},\n  \"jobs\": {},\n"
                      "  \"scene\": \"{}\",\n  \"data\": \"{}\",\n  \"best_run\": \"{}\"\n}}\n",
                      simulations, cache.simulations(), cache.reused(), summary.iterations.size() > 0 ? summary.iterations.size() - 1 : 0,
                      jsonNumber(final_cost), jsonNumber(s2), m, jsonNumber(std::sqrt(2 * final_cost / static_cast<double>(m))),
                      ceres::TerminationTypeToString(summary.termination_type), jsonEscape(summary.message), seconds, jobs * ranks.size(),
                      jsonEscape(fs::absolute(f.scene).lexically_normal().string()), jsonEscape(fs::absolute(data.file).lexically_normal().string()),
                      jsonEscape(cache.runDir(x).string()));
  if (ranks.root()) writeFileAtomic((dir / "fit.json").string(), json);

  // iterations.csv
  std::string csv = "iteration,cost,cost_change,gradient_max_norm,step_norm,trust_region_radius,step_successful";
  for (const auto& p : f.parameters) csv += fmt::format(",{}", csvCell(p.name()));
  csv += ",simulations,wall_s\n";
  for (const IterationRow& row : logger.rows) {
    csv += fmt::format("{},{:.10g},{:.10g},{:.10g},{:.10g},{:.10g},{}", row.iteration, row.cost, row.cost_change, row.gradient_max_norm,
                       row.step_norm, row.trust_region_radius, row.successful ? 1 : 0);
    for (double v : row.x) csv += fmt::format(",{:.12g}", v);
    csv += fmt::format(",{},{:.3f}\n", row.simulations, row.seconds);
  }
  if (ranks.root()) writeFileAtomic((dir / "iterations.csv").string(), csv);

  // fit.csv: the data beside the fitted and the initial runs, for the plot.
  std::vector<double> r0;
  std::vector<RunResult> initial_run;
  std::vector<double> x0;
  for (const auto& p : f.parameters) x0.push_back(p.initial);
  const bool have_initial = cache.run({x0}, initial_run) && initial_run[0].ok && residuals.residualsOf(initial_run[0].dir, r0);
  if (!ranks.root()) return !have_jacobian || summary.termination_type == ceres::FAILURE ? 3 : 0;  // rank 0 writes the results
  std::string table = data.shape ? "rod,node,component,measured,fitted,initial\n" : "probe,t,measured,fitted,initial\n";
  for (std::size_t k = 0; data.shape && k < data.xyz.size(); ++k)
    for (std::size_t c = 0; c < 3; ++c) {
      const std::size_t idx = 3 * k + c;
      table += fmt::format("{},{},{},{:.10g},{},{}\n", csvCell(data.rods[k]), data.nodes[k], "xyz"[c], data.xyz[k][c],
                           have_jacobian ? fmt::format("{:.10g}", data.xyz[k][c] + r[idx]) : "",
                           have_initial ? fmt::format("{:.10g}", data.xyz[k][c] + r0[idx]) : "");
    }
  for (std::size_t j = 0; !data.shape && j < data.probes.size(); ++j)
    for (std::size_t k = 0; k < data.t.size(); ++k) {
      const std::size_t idx = j * data.t.size() + k;
      table += fmt::format("{},{:.10g},{:.10g},{},{}\n", csvCell(data.probes[j]), data.t[k], data.values[j][k],
                           have_jacobian ? fmt::format("{:.10g}", data.values[j][k] + r[idx]) : "",
                           have_initial ? fmt::format("{:.10g}", data.values[j][k] + r0[idx]) : "");
    }
  writeFileAtomic((dir / "fit.csv").string(), table);
  const std::string plot = runPlotScript(kernel::sharedFile(executable, "plot_fit.py").string(), {dir.string()});

  if (!o.quiet) {
    std::printf("rodsim fit: %s after %zu iteration(s), %zu simulation(s) (%zu reused), %.1f s\n",
                ceres::TerminationTypeToString(summary.termination_type), summary.iterations.size() > 0 ? summary.iterations.size() - 1 : 0,
                simulations, cache.reused(), seconds);
    for (std::size_t i = 0; i < n; ++i)
      std::printf("  %s = %.10g +- %.3g (initial %.10g)\n", f.parameters[i].name().c_str(), x[i],
                  std::sqrt(cov(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(i))), f.parameters[i].initial);
    std::printf("  -> %s, %s, %s%s\n", (dir / "fit.json").c_str(), (dir / "iterations.csv").c_str(), (dir / "fit.png").c_str(),
                plot.empty() ? "" : (" (plot " + plot + ")").c_str());
  }
  if (!have_jacobian || summary.termination_type == ceres::FAILURE) {
    std::fprintf(stderr, "rodsim fit: the fit failed: %s %s\n", summary.message.c_str(), residuals.lastFailure().c_str());
    return 3;
  }
  return 0;
}

}  // namespace rodsim::studies
