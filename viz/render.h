// `rodsim render OUT_DIR`: pictures and movies of a run from its VTK frames. Each frame becomes a
// POV-Ray scene (rods as tubes of their radius, the obstacles of vtk/obstacles.csv, the simulated
// time, a colour bar) rendered by `povray`, several at once; `ffmpeg` joins the images into a movie.
// See docs/gallery.md.
#pragma once

#include <Eigen/Core>

#include <array>
#include <optional>
#include <string>
#include <vector>

namespace rodsim::viz {

struct RenderOptions {
  std::string run_dir;
  // Which frames: "last", "all", or a simulated time (the nearest frame).
  std::string frame = "last";
  bool frame_given = false;
  std::string output;  // a .png for one frame, a folder for all; default run_dir/render/
  std::string movie;   // .mp4; implies frame = "all" unless --frame is given
  int width = 800, height = 600;
  double fps = 25;
  // Colour: "rod" (one colour per rod) or a point-data array of the frames (vectors by magnitude).
  std::string color = "rod";
  std::optional<std::pair<double, double>> range;  // colour bar range; default: over the frames drawn
  // Camera; unset values are chosen to frame every rendered frame.
  std::optional<Eigen::Vector3d> camera, look_at, up;
  double fov_degrees = 35;  // horizontal field of view
  // Planes drawn as if they were obstacles (a ground that is a force, as the snake's): x,y,z,nx,ny,nz.
  std::vector<std::array<double, 6>> planes;
  int jobs = 0;             // povray processes at once; 0: the cores available
  bool keep_pov = false;  // leave each image's POV-Ray scene beside it (to adjust by hand)
  bool quiet = false;
};

// Parses the options after `render` (argv style, without the verb). Throws kernel-style InputError
// (std::invalid_argument subclass given by the caller's handler) on a bad command line.
RenderOptions parseRenderArguments(const std::vector<std::string>& args);

// Renders; returns the exit status (0 ok, 2 bad input or missing renderer, 3 a renderer failed).
int runRender(const RenderOptions& options);



}  // namespace rodsim::viz
