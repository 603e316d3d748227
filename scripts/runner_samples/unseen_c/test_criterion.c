/* Criterion sample: CALC_BROKEN=1 makes one test fail. */
#include <criterion/criterion.h>
#include <stdlib.h>
static int add(int a, int b) { return getenv("CALC_BROKEN") ? a - b : a + b; }
Test(calc, adds) { cr_assert_eq(add(2, 3), 5); }
Test(calc, adds_zero) { cr_assert_eq(add(0, 0), 0); }
