// The SDK's finite differences (<rodsim/testing/finite_differences.h>) under the tests' namespace.
#pragma once

#include <rodsim/testing/finite_differences.h>

namespace rodsim::test {
using rodsim::testing::fdGradient;
using rodsim::testing::fdJacobian;
using rodsim::testing::relErr;
}  // namespace rodsim::test
