/* Bit-fields for gotrace's reads through a pointer into a process's memory
 * (tests/runtime/test_probes.py "bitfield"): the values of bpftrace's bit-field runtime
 * tests, and a packed struct whose 64-bit field spans nine bytes. */
#include <stdio.h>

struct foo {
	unsigned int a : 4, b : 8, c : 3, d : 1, e : 16;
};

struct bar {
	unsigned short a : 4, b : 8, c : 3, d : 1;
	unsigned int e : 9, f : 15, g : 1, h : 2, i : 5;
};

struct pk {
	char x : 3;
	long long y : 64;
	int z : 5;
} __attribute__((packed));

__attribute__((noinline)) int use(struct foo *f, struct bar *b, struct pk *p)
{
	__asm__ volatile("" : : "r"(f), "r"(b), "r"(p) : "memory");
	return f->b + b->b + p->z;
}

int main(void)
{
	struct foo f = {.a = 1, .b = 2, .c = 5, .d = 0, .e = 65535};
	struct bar b = {.a = 1, .b = 217, .c = 5, .d = 1, .e = 500, .f = 31117, .g = 1, .h = 2,
			.i = 27};
	struct pk p = {.x = -3, .y = -1234567890123LL, .z = -7};
	printf("%d\n", use(&f, &b, &p));
	return 0;
}
