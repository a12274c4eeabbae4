// binfo_cgo: cgo target (external linking) for tests/unit/binfo_test.c.
package main

// static int c_twice(int x) { return 2 * x; }
import "C"

import (
	"fmt"
	"os"
)

//go:noinline
func Add(a, b int) int { return a + b }

//go:noinline
func add(a, b int) int { return Add(a, b) + int(C.c_twice(C.int(a))) }

func main() {
	fmt.Println(add(len(os.Args), 2))
}
