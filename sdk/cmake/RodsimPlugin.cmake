# rodsim_add_plugin(<name> SOURCES <files>... [LIBRARIES <targets>...])
#
# Builds the shared library `rodsim-<name>.so` that the kernel loads at run time. In the rodsim
# tree it lands in <build>/plugins (searched by rodsim automatically); out of tree it lands in the
# caller's build directory: list it in a scene's [plugins] paths or in RODSIM_PLUGIN_PATH.
function(rodsim_add_plugin name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBRARIES" ${ARGN})
  add_library(${name} MODULE ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE rodsim::sdk ${ARG_LIBRARIES})
  set_target_properties(${name} PROPERTIES
    PREFIX "" OUTPUT_NAME "rodsim-${name}"
    CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON)
  if(DEFINED RODSIM_PLUGIN_BUILD_DIR)   # in-tree build
    set_target_properties(${name} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${RODSIM_PLUGIN_BUILD_DIR})
    install(TARGETS ${name} LIBRARY DESTINATION ${RODSIM_PLUGIN_INSTALL_DIR})
  endif()
endfunction()
