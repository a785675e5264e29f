// A plugin whose Eigen types are laid out for AVX (32-byte alignment, as -march=native gives on most
// x86-64 machines) while rodsim's are for SSE2: the alignment is set directly, so that the library
// itself runs on any x86-64 (it must be refused by its signature before anything in it is called).
#include <rodsim/plugin.h>

RODSIM_PLUGIN("wide_eigen", "0.0.1", registry) { (void)registry; }
