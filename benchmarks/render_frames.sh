#!/usr/bin/env bash
# The cost of pictures (issue 23): `rodsim render` of 100 frames of the default scene at 800x600 on
# two cores (wall time, povray processes at once = 2), and the size of the default scene's VTK
# output, binary (zlib) against ascii. Not run by CI; figures in benchmarks/README.md.
#
#   benchmarks/render_frames.sh [BUILD_DIR] [WORK_DIR]      (defaults: build, /tmp/rodsim-render-bench)
set -euo pipefail
build=${1:-build}
work=${2:-/tmp/rodsim-render-bench}
rodsim="$build/bin/rodsim"
scene=scenes/flagellum_spin.toml   # 2 s, a frame every 0.02 s: frames 0..100
rm -rf "$work"
mkdir -p "$work"

"$rodsim" run "$scene" --quiet --output "$work/binary"
"$rodsim" run "$scene" --quiet --output "$work/ascii" --set output.vtk_format=ascii
frames=$(ls "$work/binary/vtk"/frame_*.vtp | wc -l)
binary=$(du -sb "$work/binary/vtk" | cut -f1)
ascii=$(du -sb "$work/ascii/vtk" | cut -f1)
echo "VTK output of $scene ($frames frames): binary $binary bytes, ascii $ascii bytes, binary/ascii $(python3 -c "print(f'{$binary/$ascii:.3f}')")"

# Frames 1..100 (the 100 after the initial state) rendered into one folder, then the movie of all.
start=$(date +%s.%N)
"$rodsim" render "$work/binary" --frame all --size 800x600 --jobs 2 --quiet --output "$work/frames"
end=$(date +%s.%N)
seconds=$(python3 -c "print(f'{$end - $start:.1f}')")
per_frame=$(python3 -c "print(f'{($end - $start) / $frames:.2f}')")
echo "render: $frames frames at 800x600, 2 povray processes: $seconds s wall ($per_frame s per frame)"
start=$(date +%s.%N)
"$rodsim" render "$work/binary" --size 800x600 --jobs 2 --quiet --output "$work/movie_frames" --movie "$work/flagellum_spin.mp4"
end=$(date +%s.%N)
echo "render --movie (the same frames and ffmpeg): $(python3 -c "print(f'{$end - $start:.1f}')") s wall, $(du -b "$work/flagellum_spin.mp4" | cut -f1) bytes"
echo "image size: $(du -b "$work/frames/frame_00050.png" | cut -f1) bytes (frame 50)"
