# rodsim_add_plugin(<name> SOURCES <files>... [CORE_SOURCES <files>...] [LIBRARIES <targets>...])
#
# Builds the shared library `rodsim-<name>.so` that the kernel loads at run time. In the rodsim
# tree it lands in <build>/plugins (searched by rodsim automatically); out of tree it lands in the
# caller's build directory: list it in a scene's [plugins] paths or in RODSIM_PLUGIN_PATH.
#
# SOURCES holds the file with the RODSIM_PLUGIN entry point. CORE_SOURCES, if given, are built once
# as the static library `<name>_core` (position-independent, hidden visibility) that the plugin
# links and that unit tests and benchmarks can link too. The plugin's folder is on the core's own
# include path only (PRIVATE): a target that includes a plugin's headers (a unit test) says so with
# its own target_include_directories, and no plugin reaches into another plugin's folder. Code that
# several plugins share belongs in a library (libs/geometry: rodsim::geometry), given in LIBRARIES.
function(rodsim_add_plugin name)
  cmake_parse_arguments(ARG "" "" "SOURCES;CORE_SOURCES;LIBRARIES" ${ARGN})
  set(libraries ${ARG_LIBRARIES})
  if(ARG_CORE_SOURCES)
    add_library(${name}_core STATIC ${ARG_CORE_SOURCES})
    target_include_directories(${name}_core PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
    target_link_libraries(${name}_core PUBLIC rodsim::sdk ${ARG_LIBRARIES})
    set_target_properties(${name}_core PROPERTIES POSITION_INDEPENDENT_CODE ON
      CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON)
    set(libraries ${name}_core)
  endif()
  add_library(${name} MODULE ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE rodsim::sdk ${libraries})
  set_target_properties(${name} PROPERTIES
    PREFIX "" OUTPUT_NAME "rodsim-${name}"
    CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON)
  if(DEFINED RODSIM_PLUGIN_BUILD_DIR)   # in-tree build
    set_target_properties(${name} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${RODSIM_PLUGIN_BUILD_DIR})
    install(TARGETS ${name} LIBRARY DESTINATION ${RODSIM_PLUGIN_INSTALL_DIR})
  endif()
endfunction()
