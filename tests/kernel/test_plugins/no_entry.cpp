// A shared library that is not a rodsim plugin: it exports no entry point.
extern "C" __attribute__((visibility("default"))) int not_a_rodsim_plugin() { return 42; }
