// golines: a target for source-line probes and probes on inlined functions. It counts
// how often its marked lines run and how often each function is called, and prints the
// counts at the end: the oracle for tests/runtime/test_lines.py. small is only ever
// inlined; both is inlined into main and also called out of line through a func value;
// Map is generic (two instantiations). Tests find lines by their // L:NAME marks.
package main

import (
	"fmt"
	"os"
)

var nStraight, nBody, nSmall, nTiny, nBoth, nMap int

func tiny(x int) int {
	nTiny++ // L:tiny
	return x + 1
}

func small(x int) int {
	nSmall++ // L:small
	return tiny(x)*2 + 1
}

func both(x int) int {
	nBoth++ // L:both
	return x + 3
}

//go:noinline
func apply(f func(int) int, x int) int { return f(x) }

//go:noinline
func Map[T, U any](xs []T, f func(T) U) []U {
	nMap++
	out := make([]U, 0, len(xs))
	for _, x := range xs {
		out = append(out, f(x))
	}
	return out
}

//go:noinline
func work(n int) int {
	total := 0
	nStraight++ // L:straight

	for i := 0; i < n; i++ { // L:loop (the condition runs n+1 times)
		nBody++ // L:body
		total += small(i) * 3 // L:split (small's code in the middle)
	}
	return total
}

func main() {
	n := 4 + len(os.Args)
	sum := 0
	for k := 0; k < 3; k++ {
		sum += work(n)
	}
	sum += small(sum) + both(1) + apply(both, 2) + apply(both, 3)
	strs := Map([]int{1, 2, 3}, func(i int) string { return fmt.Sprint(i) })
	lens := Map(strs, func(s string) int { return len(s) })
	fmt.Printf("sum %d %d %d\n", sum, len(strs), len(lens))
	fmt.Printf("straight %d\nbody %d\nsmall %d\ntiny %d\nboth %d\nmap %d\n",
		nStraight, nBody, nSmall, nTiny, nBoth, nMap)
}
