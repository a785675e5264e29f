// Versions that a plugin and the kernel must agree on.
#pragma once

#define RODSIM_STRINGIFY2(x) #x
#define RODSIM_STRINGIFY(x) RODSIM_STRINGIFY2(x)

// Bumped whenever a class or struct in sdk/ changes layout or a virtual is added or removed.
#ifndef RODSIM_ABI_VERSION  // overridable only so that tests can build a mismatching plugin
#define RODSIM_ABI_VERSION 5  /* 3: Rod::addNodeTorques added; 4: Contact::failureReason added; 5: Force::beginStep, Force::constantInStep, World::evaluateVarying added */
#endif
#define RODSIM_SDK_VERSION "0.1.0"

#if defined(__clang__)
#define RODSIM_COMPILER "clang " RODSIM_STRINGIFY(__clang_major__)
#elif defined(__GNUC__)
#define RODSIM_COMPILER "g++ " RODSIM_STRINGIFY(__GNUC__)
#else
#define RODSIM_COMPILER "unknown compiler"
#endif

// Everything that changes the binary layout of SDK types: SDK version, compiler major version,
// libstdc++ string ABI and the Eigen version (Eigen types cross the boundary).
#define RODSIM_SDK_SIGNATURE                                                          \
  "rodsim-sdk " RODSIM_SDK_VERSION "; " RODSIM_COMPILER "; cxx11-abi " RODSIM_STRINGIFY( \
      _GLIBCXX_USE_CXX11_ABI) "; eigen " RODSIM_STRINGIFY(EIGEN_WORLD_VERSION) "." RODSIM_STRINGIFY(EIGEN_MAJOR_VERSION) "." RODSIM_STRINGIFY(EIGEN_MINOR_VERSION)
