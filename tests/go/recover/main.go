// recover: Recoverer calls Middle, which calls Panicker, which panics after 20 ms;
// Recoverer recovers. The program's own output must be the same under tracing; it
// prints its own times ("took NAME US") on stderr for the traced durations to match.
package main

import (
	"fmt"
	"os"
	"time"
)

//go:noinline
func Panicker(i int) int {
	time.Sleep(20 * time.Millisecond)
	if i >= 0 {
		panic(fmt.Sprintf("boom %d", i))
	}
	return i
}

//go:noinline
func Middle(i int) int { return Panicker(i) + 1 }

//go:noinline
func Recoverer(i int) (r int) {
	t0 := time.Now()
	defer func() {
		if e := recover(); e != nil {
			fmt.Println("recovered:", e)
			r = -1
		}
		fmt.Fprintln(os.Stderr, "took Recoverer", time.Since(t0).Microseconds())
	}()
	return Middle(i)
}

//go:noinline
func Plain(i int) int {
	t0 := time.Now()
	time.Sleep(5 * time.Millisecond)
	fmt.Fprintln(os.Stderr, "took Plain", time.Since(t0).Microseconds())
	return i
}

func main() {
	for i := 0; i < 3; i++ {
		fmt.Println("result", Recoverer(i), Plain(i))
	}
}
