// slow: G goroutines call Slow concurrently, each call sleeping 50 ms, with other
// short calls of Fast in between.
package main

import (
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"
)

//go:noinline
func Slow(i int) int { time.Sleep(50 * time.Millisecond); return Fast(i) }

//go:noinline
func Fast(i int) int { return i * 3 }

func main() {
	g, rounds := 4, 3
	if len(os.Args) > 1 {
		g, _ = strconv.Atoi(os.Args[1])
	}
	var wg sync.WaitGroup
	for k := 0; k < g; k++ {
		wg.Add(1)
		go func(k int) {
			defer wg.Done()
			for r := 0; r < rounds; r++ {
				Slow(k)
				Fast(r)
			}
		}(k)
	}
	wg.Wait()
	fmt.Fprintln(os.Stderr, "slow: done")
}
