// The one Catch2 main shared by every test binary (compiled once: catch.hpp's runner is slow to build).
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
