// Asserts that a component reports a bad value with a ParamError on the right key.
#pragma once

#include <doctest/doctest.h>
#include <rodsim/params.h>

#include <string>

namespace rodsim::test {

// Runs `fn` expecting a ParamError on `key` whose message contains `text`.
template <class Fn> void checkParamError(Fn fn, const std::string& key, const std::string& text) {
  try {
    fn();
    FAIL("no ParamError thrown");
  } catch (const ParamError& e) {
    CHECK(e.key() == key);
    CHECK_MESSAGE(std::string(e.what()).find(text) != std::string::npos, e.what());
  }
}

}  // namespace rodsim::test
