// deep: recursion on fresh goroutines, deep enough that the goroutine stack grows
// (runtime.morestack re-runs the prologue of Deep). Prints the number of calls made
// on stderr as calls=N.
package main

import (
	"fmt"
	"os"
	"strconv"
	"sync"
)

var calls int64
var mu sync.Mutex

//go:noinline
func Deep(n int) int {
	var pad [64]byte // a frame large enough that growth happens quickly
	pad[n%64] = byte(n)
	mu.Lock()
	calls++
	mu.Unlock()
	if n == 0 {
		return int(pad[0])
	}
	return Deep(n-1) + int(pad[n%64]&1)
}

func main() {
	depth, rounds := 2000, 4
	if len(os.Args) > 1 {
		depth, _ = strconv.Atoi(os.Args[1])
	}
	if len(os.Args) > 2 {
		rounds, _ = strconv.Atoi(os.Args[2])
	}
	for r := 0; r < rounds; r++ {
		var wg sync.WaitGroup
		wg.Add(1)
		go func() { defer wg.Done(); Deep(depth) }()
		wg.Wait()
	}
	fmt.Fprintf(os.Stderr, "calls=%d\n", calls)
}
