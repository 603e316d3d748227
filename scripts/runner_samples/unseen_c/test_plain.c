/* A test program with no framework: assert() aborts on failure (SIGABRT), CALC_CRASH=1 segfaults. */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
static int add(int a, int b) { return getenv("CALC_BROKEN") ? a - b : a + b; }
int main(void) {
    printf("checking add\n");
    fflush(stdout);
    if (getenv("CALC_CRASH")) raise(SIGSEGV);
    assert(add(2, 3) == 5);
    printf("all checks passed\n");
    return 0;
}
