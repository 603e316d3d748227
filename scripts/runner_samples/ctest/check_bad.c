#include <stdio.h>
int main(void) {
    int got = 3 - 1;
    if (got != 1) { fprintf(stderr, "expected 1, got %d\n", got); return 1; }
    return 0;
}
