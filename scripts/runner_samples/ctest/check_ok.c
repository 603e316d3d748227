#include <stdio.h>
#include <string.h>
int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "--print-failure-text") == 0)
        printf("The following tests FAILED: (printed text, not a result)\n");
    return (1 + 1 == 2) ? 0 : 1;
}
