// hotloop: a hot loop calling one small never-inlined function a million times, for
// --max-overhead (tests/runtime/test_guard.py).
//
//	hotloop [-n 1000000] [-work 300] [-phases 10] [-rate CALLS_PER_SECOND]
//
// main runs -phases phases; each calls phase once, then step n/phases times; step does
// -work rounds of arithmetic; -rate paces the calls of step (test_otlp: spans a second).
// At the end it prints, on stderr, its own run time (from
// the first phase to the end of the loop, by its own clock):
// "hotloop: calls=C phases=P elapsed_us=E sum=S".
package main

import (
	"flag"
	"fmt"
	"os"
	"time"
)

var work int

//go:noinline
func step(x uint64) uint64 {
	for i := 0; i < work; i++ {
		x = x*6364136223846793005 + 1442695040888963407
	}
	return x
}

//go:noinline
func phase(p int) int {
	return p + 1
}

func main() {
	n := flag.Int("n", 1000000, "calls of step")
	phases := flag.Int("phases", 10, "phases (a call of phase each)")
	flag.IntVar(&work, "work", 300, "rounds of arithmetic in one step")
	rate := flag.Int("rate", 0, "calls of step a second at most (0: as fast as it goes)")
	flag.Parse()
	var s uint64 = 1
	calls, done := 0, 0
	start := time.Now()
	for p := 0; p < *phases; p++ {
		done += phase(p) - p
		for i := 0; i < *n / *phases; i++ {
			s = step(s)
			calls++
			if *rate > 0 && calls%500 == 0 {
				due := time.Duration(calls) * time.Second / time.Duration(*rate)
				if ahead := due - time.Since(start); ahead > 0 {
					time.Sleep(ahead)
				}
			}
		}
	}
	el := time.Since(start)
	fmt.Fprintf(os.Stderr, "hotloop: calls=%d phases=%d elapsed_us=%d sum=%d\n", calls, done,
		el.Microseconds(), s)
}
