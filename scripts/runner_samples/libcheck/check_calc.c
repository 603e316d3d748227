/* libcheck sample: CALC_BROKEN=1 makes one test fail, CALC_CRASH=1 one crash. */
#include <check.h>
#include <signal.h>
#include <stdlib.h>

static int add(int a, int b) { return getenv("CALC_BROKEN") ? a - b : a + b; }

START_TEST(test_add) { ck_assert_int_eq(add(2, 3), 5); }
END_TEST

START_TEST(test_add_zero) { ck_assert_int_eq(add(0, 0), 0); }
END_TEST

START_TEST(test_crash) {
    if (getenv("CALC_CRASH")) raise(SIGSEGV);
    ck_assert_int_eq(add(1, 0), 1);
}
END_TEST

int main(void) {
    Suite *s = suite_create("Calc");
    TCase *tc = tcase_create("Core");
    tcase_add_test(tc, test_add);
    tcase_add_test(tc, test_add_zero);
    tcase_add_test(tc, test_crash);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, getenv("CK_VERBOSITY") ? CK_ENV : CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
