#include <stdio.h>
#include <unistd.h>
__attribute__((noinline)) int cadd(int a, int b) { return a + b; }
int main(void) { int s = 0; for (int i = 0; i < 3; i++) s += cadd(i, 10); printf("%d\n", s); return 0; }
