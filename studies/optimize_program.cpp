// rodsim optimize in rodsim: the verb runs as its own program, rodsim-optimize (study_program.h).
#include "optimize.h"
#include "study_program.h"

namespace rodsim::studies {

int optimizeCommand(const std::vector<std::string>& args, const std::string& executable) {
  execStudyProgram("rodsim-optimize", "optimize", args, executable);
}

}  // namespace rodsim::studies
