int main(void) { return 2 + 3 == 5 ? 0 : 1; }
