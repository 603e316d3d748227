#include <stdio.h>
int main(void) { printf("2 + 3 = %d\n", 2 + 3); return 2 + 3 == 5 ? 0 : 1; }
