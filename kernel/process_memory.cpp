#include <rodsim/kernel/process_memory.h>

#include <malloc.h>

#include <climits>

namespace rodsim {

void keepFreedMemoryInProcess() {
  mallopt(M_MMAP_MAX, 0);              // every block from the heap, none mapped on its own
  mallopt(M_TRIM_THRESHOLD, INT_MAX);  // and the heap's free top kept for the next factorization
}

}  // namespace rodsim
