// doctest (C++) sample: CALC_BROKEN=1 makes one test fail.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
#include <cstdlib>
static int add(int a, int b) { return std::getenv("CALC_BROKEN") ? a - b : a + b; }
TEST_CASE("adds") { CHECK(add(2, 3) == 5); }
TEST_CASE("adds zero") { CHECK(add(0, 0) == 0); }
