int main(void) { return -1 + -1 == -2 ? 0 : 1; }
