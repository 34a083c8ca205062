// Sub-commands of the rlm executable. Each takes the arguments after its name and returns the exit status;
// errors are thrown (see main.cpp for how they become one-line messages and exit codes).
#pragma once
#include <string>
#include <vector>

namespace rlm::app {

using Args = std::vector<std::string>;
int train_command(const Args& args);
int eval_command(const Args& args);
int bench_command(const Args& args);
int sac_bench_command(const Args& args);
int memory_bench_command(const Args& args);
int envs_command(const Args& args);
int sweep_command(const Args& args);
int reproduce_command(const Args& args);

}  // namespace rlm::app
