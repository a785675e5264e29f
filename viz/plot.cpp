#include "plot.h"

#include <rodsim/kernel/installation.h>
#include <rodsim/kernel/scene.h>  // InputError

#include <rodsim/process/pool.h>
#include <rodsim/process/spawn.h>

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

namespace fs = std::filesystem;

namespace rodsim::viz {

using kernel::InputError;

PlotOptions parsePlotArguments(const std::vector<std::string>& args) {
  PlotOptions o;
  for (const std::string& arg : args) {
    if (arg == "--quiet") o.quiet = true;
    else if (!arg.empty() && arg[0] == '-') throw InputError(fmt::format("unknown option '{}' of plot\nusage: rodsim plot OUT_DIR [--quiet]", arg));
    else if (o.run_dir.empty()) o.run_dir = arg;
    else throw InputError(fmt::format("unexpected argument '{}'\nusage: rodsim plot OUT_DIR [--quiet]", arg));
  }
  if (o.run_dir.empty()) throw InputError("'plot' needs the output directory of a run\nusage: rodsim plot OUT_DIR [--quiet]");
  return o;
}

int runPlot(const PlotOptions& o, const std::string& executable) {
  if (!fs::exists(fs::path(o.run_dir) / "timeseries.csv"))
    throw InputError(fmt::format("{}: no timeseries.csv (the output directory of a run with \"csv\" in [output] formats)", o.run_dir));
  const fs::path script = kernel::sharedFile(executable, "plot_run.py");
  if (!fs::exists(script))
    throw InputError(fmt::format("{} is missing: rodsim's plotting script is installed beside it (build tree: "
                                 "build/share/rodsim/, installed: <prefix>/share/rodsim/)", script.string()));
  // Debian's interpreter, where python3-matplotlib installs (a python3 of a virtual environment
  // earlier on PATH may lack it).
  const std::string python = fs::exists("/usr/bin/python3") ? "/usr/bin/python3" : process::findProgram("python3");
  if (python.empty())
    throw InputError("rodsim plot needs Python 3 with matplotlib: install the Debian packages 'python3' and "
                     "'python3-matplotlib' (scripts/setup.sh installs them)");
  const fs::path log = fs::temp_directory_path() / fmt::format("rodsim-plot-{}.log", ::getpid());
  std::vector<process::Child> check(1);
  check[0].argv = {python, "-c", "import matplotlib"};
  check[0].log = log;
  if (process::runInOrder(check, 1)) {
    fs::remove(log);
    throw InputError(fmt::format("rodsim plot needs matplotlib for {}: install the Debian package 'python3-matplotlib' "
                                 "(scripts/setup.sh installs it)", python));
  }
  // The script's exit status 2: the timeseries.csv is not one (its message names the file and line).
  std::vector<process::Child> script_run(1);
  script_run[0].argv = {python, script.string(), o.run_dir};
  script_run[0].log = log;
  const bool failed = process::runInOrder(script_run, 1).has_value();
  // The script's own log: its messages, bounded (a runaway log is cut to its last 1 MiB).
  std::stringstream text;
  {
    std::ifstream in(log, std::ios::binary | std::ios::ate);
    const std::streamoff size = std::max<std::streamoff>(0, in.tellg());
    const std::streamoff start = std::max<std::streamoff>(0, size - (1 << 20));
    in.seekg(start);
    std::string bytes(static_cast<std::size_t>(size - start), '\0');
    in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    bytes.resize(static_cast<std::size_t>(std::max<std::streamsize>(0, in.gcount())));
    text << bytes;
  }
  fs::remove(log);
  if (failed && script_run[0].signal == 0 && script_run[0].exit_code == 2) {
    std::string message = text.str();
    while (!message.empty() && message.back() == '\n') message.pop_back();
    throw InputError(message);
  }
  if (failed) {
    std::fprintf(stderr, "rodsim plot: %s failed:\n%s", script.c_str(), text.str().c_str());
    return 3;
  }
  if (!o.quiet) std::printf("%s", text.str().c_str());
  return 0;
}

}  // namespace rodsim::viz
