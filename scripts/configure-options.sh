# Sourced by scripts/build.sh and scripts/test-sanitizers.sh. new_build_dir_options DIR prints the
# options for configuring DIR when it is new (scripts/build.sh says why): Ninja when installed, and
# a unity build. Nothing for an existing directory: it keeps what it was made with.
new_build_dir_options() {
  [ -f "$1/CMakeCache.txt" ] && return 0
  if command -v ninja >/dev/null; then printf '%s ' -G Ninja; fi
  printf '%s\n' -DCMAKE_UNITY_BUILD=ON
}
