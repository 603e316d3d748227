#include <stdio.h>
int main(void) { printf("t_bad: expected 5, got %d\n", 2 + 2); return 1; }
