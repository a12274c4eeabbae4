// locked: a function whose first instruction uprobes refuse (LOCK prefix), beside two
// that they take, for the attach tests (tests/runtime/test_attach.py).
//
//	locked [N]   calls each of main.lkLocked, main.lkPlainA, main.lkPlainB N times (default 3)
package main

import (
	"fmt"
	"os"
	"strconv"
)

var counter uint64

// lkLocked is in locked_amd64.s: LOCK INCQ counter, a LOCK-prefixed first instruction.
func lkLocked()

//go:noinline
func lkPlainA(x int) int { return x + 1 }

//go:noinline
func lkPlainB(x int) int { return x * 2 }

func main() {
	n := 3
	if len(os.Args) > 1 {
		n, _ = strconv.Atoi(os.Args[1])
	}
	sum := 0
	for i := 0; i < n; i++ {
		lkLocked()
		sum += lkPlainA(i) + lkPlainB(i)
	}
	fmt.Printf("calls=%d counter=%d sum=%d\n", n, counter, sum)
}
