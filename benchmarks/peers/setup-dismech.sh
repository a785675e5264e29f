#!/usr/bin/env bash
# Builds dismech-rods (StructuresComp/dismech-rods, commit ea6b818; Choi et al. 2024) from nothing on
# Debian 12, for the side-by-side runs of benchmarks/peers/side_by_side_dismech.sh:
#   1. Debian packages: LLVM 14 and GMP for SymEngine; Intel MKL 2020.4 from Debian's non-free
#      component (PARDISO and Eigen's MKL backend); FCL; Eigen 3.4; OpenGL/GLUT (dismech links them
#      even when it renders nothing).
#   2. SymEngine with LLVM (the lkeegan/symengine snapshot, commit b12a3be), static, installed into
#      PEERS_DIR/install. dismech generates its contact force code with SymEngine's LLVM backend.
#   3. dismech's program: its helix example compiled in as robot_description.cpp, headless, the
#      time stepper chosen by DISMECH_INTEGRATOR=BACKWARD_EULER|IMPLICIT_MIDPOINT (unset: the
#      example's IMPLICIT_MIDPOINT), the example's position logger on only with DISMECH_POSITION_LOG=1.
#
#   benchmarks/peers/setup-dismech.sh [PEERS_DIR=/work/peers]
#
# Sources are `git clone`s of the public repositories at the commits below; an existing checkout
# under PEERS_DIR/src is used as it is (a machine without access to GitHub gets the trees some
# other way and puts them there). Everything is built under PEERS_DIR, nothing in this repository.
# Each stage is skipped when its result is already there. The build runs at low priority (nice 10)
# on 2 jobs: the machine it was written for has 2 cores shared with other work.
# Result: PEERS_DIR/dismech/disMech, run from PEERS_DIR/dismech/run (where `examples` points at
# dismech's cpp_examples, from which the helix example reads its configuration).
set -euo pipefail
peers=${1:-/work/peers}
jobs=${JOBS:-2}
dismech_commit=ea6b8181996214afdba1e52b2502e54beff0768c
symengine_commit=b12a3be70ec076297d0f4b804026cefa10299fa7
mkdir -p "$peers/src" "$peers/build" "$peers/logs"

# --- 1. packages ------------------------------------------------------------------------------
# MKL is in Debian's non-free component. Say "no" to its question first: MKL as the system's
# default BLAS/LAPACK would change what every other program on the machine links against.
packages="git cmake make g++ pkg-config
  llvm-14-dev libgmp-dev zlib1g-dev libzstd-dev libtinfo-dev libxml2-dev
  libmkl-dev libfcl-dev libeigen3-dev
  freeglut3-dev libglu1-mesa-dev libgl-dev"
# shellcheck disable=SC2086
if ! dpkg -s $packages >/dev/null 2>&1; then
  if ! grep -rqsE '^(Components:|deb .*).*[[:space:]]non-free([[:space:]]|$)' /etc/apt/sources.list /etc/apt/sources.list.d/; then
    cat >/etc/apt/sources.list.d/debian-nonfree.sources <<'EOF'
Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: non-free
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
  fi
  echo "libmkl-rt libmkl-rt/use-as-default-blas-lapack boolean false" | debconf-set-selections
  apt-get update
  # shellcheck disable=SC2086
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $packages
fi

# --- 2. sources -------------------------------------------------------------------------------
checkout() {  # URL COMMIT DIR
  if [ -e "$3" ]; then
    echo "using the existing tree $3"
    return
  fi
  git clone --no-checkout "$1" "$3"
  # the media files of dismech-rods are stored outside git (LFS); the build needs none of them
  GIT_LFS_SKIP_SMUDGE=1 git -C "$3" checkout --detach "$2"
}
checkout https://github.com/lkeegan/symengine.git "$symengine_commit" "$peers/src/symengine"
checkout https://github.com/StructuresComp/dismech-rods.git "$dismech_commit" "$peers/src/dismech-rods"

# --- 3. SymEngine with LLVM -----------------------------------------------------------------------
if [ ! -f "$peers/install/lib/cmake/symengine/SymEngineConfig.cmake" ]; then
  cmake -S "$peers/src/symengine" -B "$peers/build/symengine" -DCMAKE_BUILD_TYPE=Release \
    -DWITH_LLVM=ON -DLLVM_DIR=/usr/lib/llvm-14/lib/cmake/llvm \
    -DBUILD_TESTS=OFF -DBUILD_BENCHMARKS=OFF -DCMAKE_INSTALL_PREFIX="$peers/install"
  nice -n 10 cmake --build "$peers/build/symengine" -j"$jobs"
  cmake --install "$peers/build/symengine"
fi

# --- 4. MKL for CMake -------------------------------------------------------------------------------
# dismech asks for find_package(MKL CONFIG); Debian's MKL ships no MKLConfig.cmake. dismech needs
# only the LP64 interface (its CMakeLists says so for Eigen) with GNU OpenMP threading.
mkl_cmake=$peers/mkl-cmake/lib/cmake/MKL
mkdir -p "$mkl_cmake"
cat >"$mkl_cmake/MKLConfig.cmake" <<'EOF'
# Debian's libmkl-dev (2020.4) as the target MKL::MKL: LP64 interface, GNU OpenMP threading.
if(NOT TARGET MKL::MKL)
  find_path(MKL_INCLUDE_DIR mkl.h PATHS /usr/include/mkl REQUIRED)
  find_library(MKL_INTEL_LP64 mkl_intel_lp64 REQUIRED)
  find_library(MKL_GNU_THREAD mkl_gnu_thread REQUIRED)
  find_library(MKL_CORE mkl_core REQUIRED)
  add_library(MKL::MKL INTERFACE IMPORTED)
  set_target_properties(MKL::MKL PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${MKL_INCLUDE_DIR}"
    INTERFACE_LINK_LIBRARIES "${MKL_INTEL_LP64};${MKL_GNU_THREAD};${MKL_CORE};gomp;pthread;m;dl")
endif()
set(MKL_FOUND TRUE)
EOF

# --- 5. the helix example as dismech's program ------------------------------------------------------
src=$peers/src/dismech-rods
desc=$src/robot_description.cpp
cp "$src/cpp_examples/helix_case/helix_example.cpp" "$desc"
cat >"$peers/build/dismech-env.inc" <<'EOF'

// Added for the side-by-side runs (rodsim, benchmarks/peers/setup-dismech.sh): the time stepper
// comes from DISMECH_INTEGRATOR, the position logger runs only when DISMECH_POSITION_LOG=1.
#include <cstdlib>
#include <stdexcept>
#include <string>

static IntegratorMethod integratorFromEnvironment() {
    const char* name = std::getenv("DISMECH_INTEGRATOR");
    if (name == nullptr || std::string(name) == "IMPLICIT_MIDPOINT")
        return IMPLICIT_MIDPOINT;
    if (std::string(name) == "BACKWARD_EULER")
        return BACKWARD_EULER;
    throw std::runtime_error("DISMECH_INTEGRATOR must be BACKWARD_EULER or IMPLICIT_MIDPOINT, not " +
                             std::string(name));
}

static bool positionLogRequested() {
    const char* flag = std::getenv("DISMECH_POSITION_LOG");
    return flag != nullptr && std::string(flag) == "1";
}
EOF
sed -i \
  -e '/^extern std::ofstream logging_output_file;/r '"$peers/build/dismech-env.inc" \
  -e 's/^\( *sim_params.integrator = \)IMPLICIT_MIDPOINT;/\1integratorFromEnvironment();/' \
  -e 's/^\( *render_params.render_scale = 5.0;\)$/\1\n    render_params.renderer = HEADLESS;/' \
  -e 's/^\( *\)logger = std::make_shared<PositionLogger>(/\1if (positionLogRequested())\n\1    logger = std::make_shared<PositionLogger>(/' \
  "$desc"
for edit in 'integratorFromEnvironment();' 'renderer = HEADLESS;' 'if (positionLogRequested())'; do
  if ! grep -qF "$edit" "$desc"; then
    echo "setup-dismech.sh: the helix example did not take the edit '$edit'" >&2
    exit 1
  fi
done

# --- 6. dismech --------------------------------------------------------------------------------------
# Its CMakeLists puts the program in ../ of the build folder: PEERS_DIR/dismech/disMech.
mkdir -p "$peers/dismech"
cmake -S "$src" -B "$peers/dismech/build" -DCMAKE_BUILD_TYPE=Release -DWITH_PYBIND=OFF \
  -DCMAKE_PREFIX_PATH="$peers/install;$peers/mkl-cmake"
nice -n 10 cmake --build "$peers/dismech/build" --target disMech -j"$jobs"
mkdir -p "$peers/dismech/run"
ln -sfn "$src/cpp_examples" "$peers/dismech/run/examples"
echo "dismech: $peers/dismech/disMech (run it from $peers/dismech/run)"
