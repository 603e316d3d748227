#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
#include <cstdlib>

static int add(int a, int b) { return a + b; }

TEST_CASE("adds", "[calc]") { REQUIRE(add(2, 3) == 5); }
TEST_CASE("adds negatives", "[calc]") { REQUIRE(add(-1, -1) == -2); }
TEST_CASE("adds wrongly", "[broken]") { REQUIRE(add(2, 2) == 5); }
