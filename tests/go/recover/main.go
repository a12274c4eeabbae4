// recover: Recoverer calls Middle, which calls Panicker, which panics after 20 ms;
// Recoverer recovers. The program's own output must be the same under tracing; it
// prints its own times on stderr ("took NAME INNER_US OUTER_US": inside each call and
// around it, the probes included), between which the traced durations lie.
package main

import (
	"fmt"
	"os"
	"time"
)

// inner is the last call's time by its own clock (one goroutine makes the calls).
var inner time.Duration

// took prints a call's own time and, from T, its caller's.
func took(name string, t time.Time) {
	d := time.Since(t)
	fmt.Fprintln(os.Stderr, "took", name, inner.Microseconds(), (d + time.Microsecond - 1).Microseconds())
}

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
		inner = time.Since(t0)
	}()
	return Middle(i)
}

//go:noinline
func Plain(i int) int {
	t0 := time.Now()
	time.Sleep(5 * time.Millisecond)
	inner = time.Since(t0)
	return i
}

func main() {
	for i := 0; i < 3; i++ {
		t := time.Now()
		a := Recoverer(i)
		took("Recoverer", t)
		t = time.Now()
		b := Plain(i)
		took("Plain", t)
		fmt.Println("result", a, b)
	}
}
