// Everything a plugin author includes.
#pragma once
#include <rodsim/plugin.h>
