// slow: G goroutines call Slow concurrently, each call sleeping 50 ms, with other
// short calls of Fast in between. At the end it prints how long each Slow call took by
// its own clock ("took US" lines on stderr), the oracle for a tracer's durations.
package main

import (
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"
)

var (
	mu   sync.Mutex
	took []time.Duration
)

//go:noinline
func Slow(i int) int {
	t := time.Now()
	time.Sleep(50 * time.Millisecond)
	r := Fast(i)
	d := time.Since(t)
	mu.Lock()
	took = append(took, d)
	mu.Unlock()
	return r
}

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
	for _, d := range took {
		fmt.Fprintf(os.Stderr, "took %d\n", d.Microseconds())
	}
	fmt.Fprintln(os.Stderr, "slow: done")
}
