// Precompiled header for every torch translation unit (see CMakeLists.txt).
#pragma once
#include <torch/torch.h>
