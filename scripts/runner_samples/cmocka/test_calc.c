/* cmocka sample: CALC_BROKEN=1 makes one test fail. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdlib.h>
#include <cmocka.h>

static int add(int a, int b) { return getenv("CALC_BROKEN") ? a - b : a + b; }
static void test_add(void **state) { (void)state; assert_int_equal(add(2, 3), 5); }
static void test_add_zero(void **state) { (void)state; assert_int_equal(add(0, 0), 0); }
static void test_skipped(void **state) { (void)state; skip(); }

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_add), cmocka_unit_test(test_add_zero), cmocka_unit_test(test_skipped),
    };
    return cmocka_run_group_tests_name("calc", tests, NULL, NULL);
}
