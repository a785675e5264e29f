// rodsim fit in rodsim: the verb runs as its own program, rodsim-fit (study_program.h).
#include "fit.h"
#include "study_program.h"

namespace rodsim::studies {

int fitCommand(const std::vector<std::string>& args, const std::string& executable) {
  execStudyProgram("rodsim-fit", "fit", args, executable);
}

}  // namespace rodsim::studies
