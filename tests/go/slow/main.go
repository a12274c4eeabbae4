// slow: G goroutines call Slow concurrently, each call sleeping 50 ms, with other
// short calls of Fast in between. At the end it prints how long each Slow call took by
// its own clock and by its caller's ("took Slow INNER_US OUTER_US" lines on stderr:
// inside the call, and around it, the probes included), between which a tracer's
// duration of the call lies, and how long each Fast call took around it ("fast NS"),
// which a tracer's duration of that call fits in.
package main

import (
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Each call notes its time in a slot taken atomically: no lock to wait for inside the
// timed call (as in tests/go/funcgraph).
var (
	took  [1 << 12]slowNote
	ntook atomic.Int64
	outer [1 << 12]slowNote
	nout  atomic.Int64
	fastd [1 << 12]time.Duration
	nfast atomic.Int64
)

// slowNote: a Slow call's time and its goroutine (each goroutine calls Slow in turn,
// so the n-th inner time of a goroutine pairs with its n-th outer time)
type slowNote struct {
	k int
	d time.Duration
}

//go:noinline
func Slow(i int) int {
	i0 := i
	t := time.Now()
	time.Sleep(50 * time.Millisecond)
	r := fast(i)
	d := time.Since(t)
	if i := ntook.Add(1) - 1; i < int64(len(took)) {
		took[i] = slowNote{i0, d}
	}
	return r
}

//go:noinline
func Fast(i int) int { return i * 3 }

// fast calls Fast between two readings of the clock: the call's probes fire in between.
func fast(i int) int {
	t := time.Now()
	r := Fast(i)
	d := time.Since(t)
	if k := nfast.Add(1) - 1; k < int64(len(fastd)) {
		fastd[k] = d
	}
	return r
}

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
				t := time.Now()
				Slow(k)
				d := time.Since(t)
				if i := nout.Add(1) - 1; i < int64(len(outer)) {
					outer[i] = slowNote{k, d}
				}
				fast(r)
			}
		}(k)
	}
	wg.Wait()
	outs := map[int][]time.Duration{}
	for i := int64(0); i < nout.Load() && i < int64(len(outer)); i++ {
		outs[outer[i].k] = append(outs[outer[i].k], outer[i].d)
	}
	for i := int64(0); i < ntook.Load() && i < int64(len(took)); i++ {
		n := took[i]
		if len(outs[n.k]) > 0 {
			fmt.Fprintf(os.Stderr, "took Slow %d %d\n", n.d.Microseconds(),
				(outs[n.k][0] + time.Microsecond - 1).Microseconds())
			outs[n.k] = outs[n.k][1:]
		}
	}
	for i := int64(0); i < nfast.Load() && i < int64(len(fastd)); i++ {
		fmt.Fprintf(os.Stderr, "fast %d\n", fastd[i].Nanoseconds())
	}
	fmt.Fprintln(os.Stderr, "slow: done")
}
