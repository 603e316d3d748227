#include <stdio.h>
int main(void) { int r = 2 + 2; if (r != 5) { fprintf(stderr, "expected 5, got %d\n", r); return 1; } return 0; }
