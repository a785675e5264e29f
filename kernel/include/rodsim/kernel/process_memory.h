#pragma once

namespace rodsim {

// Keeps freed memory in the process heap instead of returning it to the system: large blocks are
// not mapped anew for each allocation, and the heap is not trimmed. A process-wide glibc setting,
// for the rodsim command and the programs that time what it runs, called before anything is
// allocated in earnest. UMFPACK frees and allocates its numeric factor (tens of MB on a pile of
// 3000 crossing rods) at every factorization; mapped afresh each time, the new pages fault in on
// first touch, 17 % of an imc step on that pile (benchmarks/README.md, "Contacts that scale").
void keepFreedMemoryInProcess();

}  // namespace rodsim
