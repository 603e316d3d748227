#include <gtest/gtest.h>
#include <cstdlib>
#include <thread>
#include <chrono>

static int add(int a, int b) { return a + b; }

TEST(Calc, Adds) { EXPECT_EQ(5, add(2, 3)); }
TEST(Calc, AddsNegatives) { EXPECT_EQ(-2, add(-1, -1)); }
TEST(Calc, AddsWrongly) {
  if (std::getenv("CALC_BROKEN")) EXPECT_EQ(5, add(2, 2));
}
TEST(Calc, Slow) {
  if (std::getenv("CALC_HANG")) std::this_thread::sleep_for(std::chrono::seconds(60));
}
TEST(Calc, DISABLED_Multiplies) { EXPECT_EQ(6, 2 * 3); }
