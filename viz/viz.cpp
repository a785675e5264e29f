#include "viz.h"

#include "plot.h"
#include "render.h"

#include <fmt/format.h>

#include <cstdio>
#include <string>

namespace rodsim::viz {

const char* const kUsage =
    "  rodsim render OUT_DIR [--frame last|all|TIME] [--output FILE|DIR] [--movie FILE.mp4] [--fps N]\n"
    "                [--size WxH] [--color rod|FIELD] [--range LO,HI] [--camera X,Y,Z] [--look-at X,Y,Z]\n"
    "                [--up X,Y,Z] [--fov DEGREES] [--plane X,Y,Z,NX,NY,NZ] [--jobs N] [--keep-pov] [--quiet]\n"
    "                                                 pictures (POV-Ray) and a movie (ffmpeg) of a run\n"
    "  rodsim plot OUT_DIR [--quiet]                  the standard plots of timeseries.csv, as PNG in OUT_DIR\n";

int runVerb(const std::string& verb, const std::vector<std::string>& args, const std::string& executable) {
  for (const std::string& a : args)
    if (a == "--help" || a == "-h") {
      std::printf("usage:\n%s", kUsage);
      return 0;
    }
  if (verb == "render") return runRender(parseRenderArguments(args));
  return runPlot(parsePlotArguments(args), executable);
}

}  // namespace rodsim::viz
