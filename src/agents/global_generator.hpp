// torch's global generators (the CPU one and one per CUDA device) are what torch's module initialisers draw from, so a
// run seeds the CPU one right before it builds its networks; every other random stream of a run is a generator of its
// own (core/seed.hpp). Runs that a sweep trains on threads of one process (`rlm sweep --in-process`) share the
// global generators, so a run seeds and builds, and a checkpoint reads or restores their state, holding this lock:
// each run then gets the parameters it gets alone, whatever the other threads do meanwhile.
#pragma once
#include <mutex>

namespace rlm::agents {

/// The process's one lock over torch's global generators.
std::mutex& global_generator_mutex();

}  // namespace rlm::agents
