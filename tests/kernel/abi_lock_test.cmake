# ctest: the configure-time ABI lock (sdk/cmake/RodsimAbiLock.cmake) refuses a core header change
# without a new ABI version and a capabilities.h change without a new minor version, and accepts a
# comment-only change. Run as: cmake -DSOURCE_DIR=... -DWORK_DIR=... -P abi_lock_test.cmake
include(${SOURCE_DIR}/sdk/cmake/RodsimAbiLock.cmake)

function(check_case name file append expect_failure)
  set(sdk ${WORK_DIR}/${name})
  file(REMOVE_RECURSE ${sdk})
  file(COPY ${SOURCE_DIR}/sdk/include ${SOURCE_DIR}/sdk/abi.lock DESTINATION ${sdk})
  file(APPEND ${sdk}/include/rodsim/${file} "${append}")
  file(WRITE ${sdk}/check.cmake "include(${SOURCE_DIR}/sdk/cmake/RodsimAbiLock.cmake)\nrodsim_check_abi_lock(${sdk} ${sdk}/hash.h)\n")
  execute_process(COMMAND ${CMAKE_COMMAND} -P ${sdk}/check.cmake RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(expect_failure AND rc EQUAL 0)
    message(FATAL_ERROR "${name}: the lock accepted a change that needs a version bump")
  elseif(NOT expect_failure AND NOT rc EQUAL 0)
    message(FATAL_ERROR "${name}: the lock refused an allowed change:\n${out}")
  endif()
  message(STATUS "${name}: ok")
endfunction()

check_case(unchanged rod.h "" FALSE)
check_case(comment_only rod.h "\n// a comment changes nothing\n" FALSE)
check_case(core_change rod.h "\nnamespace rodsim { struct AddedToCore { int x; }; }\n" TRUE)
check_case(capability_without_minor capabilities.h "\nnamespace rodsim { class NewCapability {}; }\n" TRUE)
