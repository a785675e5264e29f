// rodsim optimize (docs/inverse.md): CMA-ES (pagmo2's cmaes, Hansen 2006) over bounded scene keys,
// as Gazzola et al. (2018) design their gaits (Sec. V.2-V.3: the muscle B-spline coefficients and the
// wavelength of Eq. 33 for the snake's forward speed, Fig. 10; the swimmer's, Fig. 11).
//
// Each generation's candidates run in parallel as child processes. pagmo 2.18's cmaes has no batch
// evaluator (set_bfe is for gaco, pso_gen, nsga2, ...) and evaluates one candidate at a time; but it
// samples all lambda candidates of a generation before it evaluates any (cmaes.cpp, steps 1 and 3),
// from its own generator. So each generation is evolved twice from the same state: first a copy of
// the algorithm (same state, same generator) with a problem that only records what it is asked
// (returns 0), which yields the generation's candidates; they run as one batch; then the algorithm
// itself, whose evaluations read the batch's results. The search is exactly pagmo's, and the runs
// are parallel.
//
// The parameters are scaled to [0, 1] (u = (x - lower) / (upper - lower), or the same on ln x), so
// that `sigma` is a fraction of every range, the initial step of the paper's setups.
// Determinism and resuming: the random `seed` fixes pagmo's generator; runs are cached by their --set values
// (RunCache), so running the same file again replays the same candidates and reuses every finished
// run: an interrupted optimization continues where it stopped.
#include "optimize.h"

#include "inverse.h"

#include <rodsim/kernel/installation.h>
#include <rodsim/kernel/output.h>
#include <rodsim/kernel/scene.h>

#include <rodsim/process/spawn.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <pagmo/algorithms/cmaes.hpp>
#include <pagmo/population.hpp>
#include <pagmo/problem.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <map>
#include <memory>

namespace fs = std::filesystem;

namespace rodsim::studies {

using namespace rodsim::kernel;

namespace {

constexpr const char* kUsage =
    "usage: rodsim optimize OPT.toml [--output DIR] [--jobs N] [--quiet]\n"
    "       minimize or maximize a probe statistic over scene keys with CMA-ES (pagmo2); docs/inverse.md\n";

struct Objective {
  std::string probe, statistic;
  double t0 = 0, t1 = 0;
  bool maximize = true;
};

// The statistic of one probe over [t0, t1] of a timeseries; NaN when it cannot be formed.
double statisticOf(const Series& s, const Objective& o) {
  const auto* t = s.column("t");
  const auto* y = s.column(o.probe);
  if (!t || !y) return std::numeric_limits<double>::quiet_NaN();
  std::vector<double> ts, ys;
  for (std::size_t k = 0; k < t->size(); ++k)
    if ((*t)[k] >= o.t0 - 1e-12 && (*t)[k] <= o.t1 + 1e-12) ts.push_back((*t)[k]), ys.push_back((*y)[k]);
  if (ys.empty()) return std::numeric_limits<double>::quiet_NaN();
  if (o.statistic == "final") return ys.back();
  if (o.statistic == "min") return *std::min_element(ys.begin(), ys.end());
  if (o.statistic == "max") return *std::max_element(ys.begin(), ys.end());
  double mt = 0, my = 0;
  for (std::size_t k = 0; k < ys.size(); ++k) mt += ts[k], my += ys[k];
  mt /= static_cast<double>(ys.size());
  my /= static_cast<double>(ys.size());
  if (o.statistic == "mean") return my;
  // rate: the least-squares slope of y(t) over the window (a mean velocity that ignores the
  // within-period oscillation better than (y1 - y0) / (t1 - t0) over a whole number of periods).
  double num = 0, den = 0;
  for (std::size_t k = 0; k < ys.size(); ++k) num += (ts[k] - mt) * (ys[k] - my), den += (ts[k] - mt) * (ts[k] - mt);
  return den > 0 ? num / den : std::numeric_limits<double>::quiet_NaN();
}

// What the problem evaluates: in recording mode it notes the candidates and returns 0; otherwise
// it returns the fitness (pagmo minimizes: -objective when maximizing) of finished runs, running
// a candidate not run yet on its own.
struct Evaluator {
  const InverseFile* f = nullptr;
  const Objective* objective = nullptr;
  RunCache* cache = nullptr;
  bool keep_runs = false;
  bool recording = false;
  bool interrupted = false;
  std::vector<std::vector<double>> recorded;
  std::map<std::vector<double>, double> objectives;  // by scaled point; NaN: the run failed
  std::size_t failures = 0;
  bool in_generation = false;     // the real evolve of a generation is running
  std::size_t unbatched = 0;      // its fitness calls not found in the batch (expected: none)

  std::vector<double> physical(const std::vector<double>& u) const {
    std::vector<double> x(u.size());
    for (std::size_t i = 0; i < u.size(); ++i) {
      const InverseParameter& p = f->parameters[i];
      const double v = std::clamp(u[i], 0.0, 1.0);
      x[i] = p.log ? std::exp(std::log(p.lower) + v * (std::log(p.upper) - std::log(p.lower))) : p.lower + v * (p.upper - p.lower);
      x[i] = std::clamp(x[i], p.lower, p.upper);
    }
    return x;
  }
  double scaled(const InverseParameter& p, double x) const {
    return p.log ? (std::log(x) - std::log(p.lower)) / (std::log(p.upper) - std::log(p.lower)) : (x - p.lower) / (p.upper - p.lower);
  }

  // Runs the points not evaluated yet as one batch. False when interrupted.
  bool runBatch(const std::vector<std::vector<double>>& us) {
    std::vector<std::vector<double>> todo, points;
    for (const auto& u : us)
      if (!objectives.count(u) && std::find(todo.begin(), todo.end(), u) == todo.end()) todo.push_back(u);
    if (todo.empty()) return true;
    for (const auto& u : todo) points.push_back(physical(u));
    std::vector<RunResult> results;
    // The objective is kept beside the run (round-trip exact), so that its timeseries may go
    // (keep_runs = false); written once per run, by the rank that made it (RunCache::run's finish).
    const auto keepObjective = [&](RunResult& r) {
      const fs::path record = r.dir / "objective.txt";
      if (!readFile(record).empty()) return;
      writeFileAtomic(record.string(), fmt::format("{:.17g}\n", statisticOf(readTimeseries(r.dir / "timeseries.csv"), *objective)));
      if (!keep_runs) {
        std::error_code ec;
        fs::remove(r.dir / "timeseries.csv", ec);
        for (const auto& e : fs::directory_iterator(r.dir, ec))
          if (e.path().extension() == ".vtp" || e.path().extension() == ".pvd") fs::remove(e.path(), ec);
      }
      cache->rerecord(r.dir);  // objective.txt is now one of the outputs the entry relies on
    };
    if (!cache->run(points, results, keepObjective)) {
      interrupted = true;
      return false;
    }
    for (std::size_t i = 0; i < todo.size(); ++i) {
      double value = std::numeric_limits<double>::quiet_NaN();
      const std::string text = results[i].ok ? readFile(results[i].dir / "objective.txt") : "";
      if (!text.empty() && !run_record::parseCell(text.substr(0, text.find_last_not_of(" \n\r") + 1), value))
        value = std::numeric_limits<double>::quiet_NaN();
      if (!std::isfinite(value)) ++failures;
      objectives[todo[i]] = value;
    }
    return true;
  }

  double fitness(const std::vector<double>& u) {
    if (recording) {
      recorded.push_back(u);
      return 0.0;
    }
    if (!objectives.count(u) && !interrupted) {
      if (in_generation) ++unbatched;  // the dry run missed it: still correct, only not in parallel
      runBatch({u});
    }
    const auto it = objectives.find(u);
    const double v = it == objectives.end() ? std::numeric_limits<double>::quiet_NaN() : it->second;
    // A failed run (diverged, NaN) ranks below every finished one.
    if (!std::isfinite(v)) return std::numeric_limits<double>::max();
    return objective->maximize ? -v : v;
  }
};

// pagmo's user-defined problem: a handle on the shared evaluator (copies of the problem, made by
// pagmo's populations, all reach the same one).
struct GaitProblem {
  std::shared_ptr<Evaluator> ev;
  std::size_t n = 1;
  pagmo::vector_double fitness(const pagmo::vector_double& u) const { return {ev->fitness(u)}; }
  std::pair<pagmo::vector_double, pagmo::vector_double> get_bounds() const {
    return {pagmo::vector_double(n, 0.0), pagmo::vector_double(n, 1.0)};
  }
  std::string get_name() const { return "rodsim optimize"; }
};


Objective readObjective(const InverseFile& f) {
  Objective o;
  const toml::node* goal = f.root.get("goal");
  if (!goal) throw InputError(fmt::format("{}:1:1: missing required key 'goal' (\"maximize\" or \"minimize\")", f.file));
  if (!goal->is_string() || (goal->value<std::string>() != "maximize" && goal->value<std::string>() != "minimize"))
    throw InputError(fmt::format("{}: 'goal' expects \"maximize\" or \"minimize\", found {}", f.at(goal->source()), describeNode(*goal)));
  o.maximize = goal->value<std::string>() == "maximize";
  const toml::node* obj = f.root.get("objective");
  if (!obj) throw InputError(fmt::format("{}:1:1: missing required table [objective] (probe, statistic, window)", f.file));
  const toml::table* t = obj->as_table();
  if (!t) throw InputError(fmt::format("{}: 'objective' expects a table, found {}", f.at(obj->source()), describeNode(*obj)));
  static const std::vector<std::string> keys{"probe", "statistic", "window"};
  for (auto&& [k, v] : *t) {
    const std::string key(k.str());
    if (std::find(keys.begin(), keys.end(), key) != keys.end()) continue;
    const std::string near = closestMatch(key, keys);
    throw InputError(fmt::format("{}: unknown key '{}' in [objective] (valid: {}{})", f.at(k.source()), key, fmt::join(keys, ", "),
                                 near.empty() ? "" : "; did you mean '" + near + "'?"));
  }
  const toml::node* probe = t->get("probe");
  if (!probe) throw InputError(fmt::format("{}: [objective]: missing required key 'probe' (a probe of the scene)", f.at(obj->source())));
  if (!probe->is_string())
    throw InputError(fmt::format("{}: 'probe' expects a string, found {}", f.at(probe->source()), describeNode(*probe)));
  o.probe = probe->value<std::string>().value();
  if (std::find(f.probes.begin(), f.probes.end(), o.probe) == f.probes.end()) {
    const std::string near = closestMatch(o.probe, f.probes);
    throw InputError(fmt::format("{}: unknown probe '{}' (the scene {} has: {}{})", f.at(probe->source()), o.probe, f.scene,
                                 f.probes.empty() ? "none" : fmt::format("{}", fmt::join(f.probes, ", ")),
                                 near.empty() ? "" : "; did you mean '" + near + "'?"));
  }
  static const std::vector<std::string> stats{"final", "mean", "min", "max", "rate"};
  o.statistic = "final";
  if (const toml::node* s = t->get("statistic")) {
    if (!s->is_string() || std::find(stats.begin(), stats.end(), s->value<std::string>().value_or("")) == stats.end())
      throw InputError(fmt::format("{}: 'statistic' expects one of {}, found {}", f.at(s->source()), fmt::join(stats, ", "), describeNode(*s)));
    o.statistic = s->value<std::string>().value();
  }
  o.t0 = 0, o.t1 = f.duration;
  if (const toml::node* w = t->get("window")) {
    const toml::array* a = w->as_array();
    if (!a || a->size() != 2 || !(*a)[0].is_number() || !(*a)[1].is_number())
      throw InputError(fmt::format("{}: 'window' expects [t0, t1] (two numbers), found {}", f.at(w->source()), describeNode(*w)));
    o.t0 = (*a)[0].value<double>().value(), o.t1 = (*a)[1].value<double>().value();
    if (!(o.t0 >= 0 && o.t0 < o.t1 && o.t1 <= f.duration * (1 + 1e-12)))
      throw InputError(fmt::format("{}: 'window' [{}, {}] must satisfy 0 <= t0 < t1 <= simulation.duration ({})", f.at(w->source()), o.t0,
                                   o.t1, f.duration));
  }
  return o;
}

long long readWhole(const InverseFile& f, const char* key, long long fallback, long long min, long long max) {
  const toml::node* n = f.root.get(key);
  if (!n) return fallback;
  if (!n->is_integer() || n->value<long long>().value() < min || n->value<long long>().value() > max)
    throw InputError(fmt::format("{}: '{}' expects a whole number from {} to {}, found {}", f.at(n->source()), key, min, max, describeNode(*n)));
  return n->value<long long>().value();
}

}  // namespace

int optimizeCommand(const std::vector<std::string>& args, const std::string& executable) {
  InverseOptions o = parseInverseArgs(args, kUsage, "optimize");
  TypeRegistry registry;
  loadPluginsFor(o.file, registry);
  const InverseFile f =
      loadInverseFile(o.file, registry, {"goal", "seed", "generations", "population", "sigma", "objective", "keep_runs"}, "optimize");
  const Objective objective = readObjective(f);
  const std::size_t n = f.parameters.size();
  const unsigned seed = static_cast<unsigned>(readWhole(f, "seed", 1, 0, 4294967295LL));
  const long long generations = readWhole(f, "generations", 20, 1, 100000);
  // Hansen's default population, 4 + floor(3 ln n); pagmo's cmaes needs at least 5.
  const long long lambda_default = std::max<long long>(5, 4 + static_cast<long long>(std::floor(3 * std::log(static_cast<double>(n)))));
  const long long lambda = readWhole(f, "population", lambda_default, 5, 10000);
  double sigma = 0.25;
  if (const toml::node* s = f.root.get("sigma")) {
    sigma = requireNumber(f, *s, "sigma");
    if (sigma <= 0 || sigma > 1)
      throw InputError(fmt::format("{}: 'sigma' must be in (0, 1] (a fraction of each parameter's range), found {}", f.at(s->source()), sigma));
  }
  bool keep_runs = false;
  if (const toml::node* k = f.root.get("keep_runs")) {
    if (!k->is_boolean()) throw InputError(fmt::format("{}: 'keep_runs' expects true or false, found {}", f.at(k->source()), describeNode(*k)));
    keep_runs = k->value<bool>().value();
  }

  const fs::path dir = o.output.empty() ? defaultStudyDir(o.file) : fs::path(o.output);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw InputError(fmt::format("cannot create the output directory '{}': {}", dir.string(), ec.message()));
  holdStopSignals();  // validated: from here on an interruption is reported, not fatal
  // Under mpirun the ranks share each generation's runs (study_ranks.h); rank 0 writes and prints.
  const StudyRanks ranks(executable, "optimize");
  if (!ranks.root()) o.quiet = true;
  const int jobs = ranks.size() > 1 && o.jobs <= 0 ? 1 : process::jobsOrCores(o.jobs);
  // A run's objective.txt holds the objective as it was defined then: a changed objective (probe,
  // statistic, window) makes other runs (the timeseries it needs may be gone, keep_runs = false).
  RunCache cache(f, dir, executable, jobs, true, "rodsim optimize", registry,
                 fmt::format("objective {} {} {:.17g} {:.17g}", objective.probe, objective.statistic, objective.t0, objective.t1));
  cache.share(ranks);
  auto ev = std::make_shared<Evaluator>();
  ev->f = &f, ev->objective = &objective, ev->cache = &cache, ev->keep_runs = keep_runs;
  if (!o.quiet)
    std::printf("rodsim optimize: CMA-ES (pagmo2), %zu parameter(s), population %lld, %lld generation(s), seed %u, %s -> %s\n", n,
                lambda, generations, seed,
                (ranks.size() > 1 ? fmt::format("{} MPI ranks x {} job(s)", ranks.size(), jobs) : fmt::format("{} job(s)", jobs)).c_str(),
                dir.c_str());

  const auto start = std::chrono::steady_clock::now();
  std::vector<double> u0;
  for (const auto& p : f.parameters) u0.push_back(ev->scaled(p, p.initial));
  GaitProblem udp;
  udp.ev = ev, udp.n = n;
  pagmo::population pop{pagmo::problem{udp}, 0u, seed};
  // Generation 0: lambda copies of the initial point (one run), so that CMA-ES starts its mean there.
  for (long long i = 0; i < lambda; ++i) pop.push_back(u0);
  if (ev->interrupted) {
    if (ranks.root()) std::printf("rodsim optimize: interrupted; run the same command again to continue\n");
    return 3;
  }
  const double initial_objective = ev->objectives[u0];
  // memory = true: each evolve() continues from the previous generation's state. ftol = xtol = 0:
  // the generation budget decides (pagmo's ftol test would stop at once on the equal generation 0).
  pagmo::cmaes algo(1u, -1, -1, -1, -1, sigma, 0.0, 0.0, true, true, seed);

  struct GenerationRow {
    long long generation;
    std::size_t simulations;
    double best, mean, best_so_far;
    std::vector<double> best_x;
    double seconds;
  };
  std::vector<GenerationRow> rows;
  std::vector<double> best_u = u0;
  double best = initial_objective;
  auto better = [&](double a, double b) { return std::isfinite(a) && (!std::isfinite(b) || (objective.maximize ? a > b : a < b)); };
  rows.push_back({0, cache.distinct(), initial_objective, initial_objective, initial_objective, ev->physical(u0), 0.0});
  bool interrupted = false;
  for (long long g = 1; g <= generations; ++g) {
    ev->recording = true;
    ev->recorded.clear();
    pagmo::cmaes dry = algo;  // same state and generator: the same candidates
    dry.evolve(pop);
    ev->recording = false;
    if (!ev->runBatch(ev->recorded)) {
      interrupted = true;
      break;
    }
    ev->in_generation = true;
    pop = algo.evolve(pop);
    ev->in_generation = false;
    if (ev->interrupted) {
      interrupted = true;
      break;
    }
    GenerationRow row{g, cache.distinct(), std::numeric_limits<double>::quiet_NaN(), 0.0, 0.0, {}, 0.0};
    std::size_t finite = 0;
    std::vector<double> gen_best_u;
    for (const auto& u : pop.get_x()) {
      const double v = ev->objectives.count(u) ? ev->objectives[u] : std::numeric_limits<double>::quiet_NaN();
      if (!std::isfinite(v)) continue;
      row.mean += v, ++finite;
      if (better(v, row.best)) row.best = v, gen_best_u = u;
      if (better(v, best)) best = v, best_u = u;
    }
    row.mean = finite ? row.mean / static_cast<double>(finite) : std::numeric_limits<double>::quiet_NaN();
    row.best_so_far = best;
    row.best_x = gen_best_u.empty() ? std::vector<double>(n, std::numeric_limits<double>::quiet_NaN()) : ev->physical(gen_best_u);
    row.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    rows.push_back(row);
    if (!o.quiet) {
      std::vector<std::string> shown;
      for (std::size_t i = 0; i < n; ++i) shown.push_back(fmt::format("{}={:.4g}", f.parameters[i].name(), row.best_x[i]));
      std::printf("rodsim optimize: generation %lld: best %.6g, mean %.6g, best so far %.6g (%s) [%zu simulations, %.0f s]\n", g, row.best,
                  row.mean, best, fmt::format("{}", fmt::join(shown, " ")).c_str(), row.simulations, row.seconds);
      std::fflush(stdout);
    }
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const std::vector<double> best_x = ev->physical(best_u), x0 = ev->physical(u0);

  if (!ranks.root()) return interrupted ? 3 : 0;  // rank 0 writes the results
  std::string csv = "generation,simulations,best,mean,best_so_far";
  for (const auto& p : f.parameters) csv += fmt::format(",{}", csvCell(p.name()));
  csv += ",wall_s\n";
  for (const auto& r : rows) {
    csv += fmt::format("{},{},{:.10g},{:.10g},{:.10g}", r.generation, r.simulations, r.best, r.mean, r.best_so_far);
    for (double v : r.best_x) csv += fmt::format(",{:.10g}", v);
    csv += fmt::format(",{:.3f}\n", r.seconds);
  }
  writeFileAtomic((dir / "generations.csv").string(), csv);
  std::string json = "{\n  \"parameters\": {";
  for (std::size_t i = 0; i < n; ++i)
    json += fmt::format("{}\n    \"{}\": {{\"value\": {}, \"initial\": {}, \"lower\": {}, \"upper\": {}}}", i ? "," : "",
                        jsonEscape(f.parameters[i].name()), jsonNumber(best_x[i]), jsonNumber(f.parameters[i].initial),
                        jsonNumber(f.parameters[i].lower), jsonNumber(f.parameters[i].upper));
  json += fmt::format(
      "\n  }},\n  \"goal\": \"{}\",\n  \"objective\": {{\"probe\": \"{}\", \"statistic\": \"{}\", \"window\": [{}, {}]}},\n"
      "  \"best_objective\": {},\n  \"initial_objective\": {},\n  \"simulations\": {},\n  \"simulations_run\": {},\n"
      "  \"simulations_reused\": {},\n  \"unbatched_evaluations\": {},\n  \"failed_runs\": {},\n  \"generations\": {},\n  \"population\": {},\n  \"sigma\": {},\n"
      "  \"seed\": {},\n  \"jobs\": {},\n  \"wall_time_s\": {:.3f},\n  \"complete\": {},\n  \"best_run\": \"{}\",\n  \"scene\": \"{}\"\n}}\n",
      objective.maximize ? "maximize" : "minimize", jsonEscape(objective.probe), objective.statistic, jsonNumber(objective.t0),
      jsonNumber(objective.t1), jsonNumber(best), jsonNumber(initial_objective), cache.distinct(), cache.simulations(),
      cache.reused(), ev->unbatched, ev->failures, rows.size() - 1, lambda, jsonNumber(sigma), seed, jobs * ranks.size(), seconds, interrupted ? "false" : "true",
      jsonEscape(cache.runDir(best_x).string()), jsonEscape(fs::absolute(f.scene).lexically_normal().string()));
  writeFileAtomic((dir / "optimize.json").string(), json);
  const std::string plot = runPlotScript(kernel::sharedFile(executable, "plot_optimize.py").string(), {dir.string()});
  if (!o.quiet) {
    std::printf("rodsim optimize: %s%s %s of %s: %.6g (initial %.6g) after %zu generation(s), %zu simulation(s) (%zu reused), %.1f s\n",
                interrupted ? "INTERRUPTED: " : "", objective.maximize ? "best" : "lowest", objective.statistic.c_str(),
                objective.probe.c_str(), best, initial_objective, rows.size() - 1, cache.distinct(), cache.reused(), seconds);
    for (std::size_t i = 0; i < n; ++i)
      std::printf("  %s = %.8g (initial %.8g)\n", f.parameters[i].name().c_str(), best_x[i], x0[i]);
    std::printf("  -> %s, %s, %s%s\n", (dir / "optimize.json").c_str(), (dir / "generations.csv").c_str(), (dir / "convergence.png").c_str(),
                plot.empty() ? "" : (" (plot " + plot + ")").c_str());
  }
  if (interrupted) {
    std::printf("rodsim optimize: interrupted; run the same command again to continue (finished runs are reused)\n");
    return 3;
  }
  return 0;
}

}  // namespace rodsim::studies
