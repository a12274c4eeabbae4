// adds: add, add1, add2, add3 called in a known order with known arguments.
package main

import (
	"fmt"
	"os"
)

//go:noinline
func add(a, b int) int { return a + b }

//go:noinline
func add1(a, b int) int { return add(a, b) + 1 }

//go:noinline
func add2(a, b int) int { return add1(a, b) + 2 }

//go:noinline
func add3(a, b int) int { return add2(a, b) + 3 }

func main() {
	s := 0
	for i := 0; i < 3; i++ {
		s += add3(i, 10*i)
		s += add(i, -i)
	}
	fmt.Fprintln(os.Stderr, "s", s)
}
