/* CUnit sample (basic interface): CALC_BROKEN=1 makes one test fail. */
#include <CUnit/Basic.h>
#include <stdlib.h>

static int add(int a, int b) { return getenv("CALC_BROKEN") ? a - b : a + b; }
static void test_add(void) { CU_ASSERT_EQUAL(add(2, 3), 5); }
static void test_add_zero(void) { CU_ASSERT_EQUAL(add(0, 0), 0); }

int main(void) {
    if (CU_initialize_registry() != CUE_SUCCESS) return CU_get_error();
    CU_pSuite suite = CU_add_suite("calc", NULL, NULL);
    CU_add_test(suite, "adds", test_add);
    CU_add_test(suite, "adds zero", test_add_zero);
    CU_basic_set_mode(getenv("CU_SILENT") ? CU_BRM_SILENT : CU_BRM_VERBOSE);
    CU_basic_run_tests();
    unsigned failed = CU_get_number_of_failures();
    CU_cleanup_registry();
    return failed ? 1 : 0;
}
