// recover: Recoverer calls Middle, which calls Panicker, which panics after 20 ms;
// Recoverer recovers. The program's own output must be the same under tracing.
package main

import (
	"fmt"
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
	defer func() {
		if e := recover(); e != nil {
			fmt.Println("recovered:", e)
			r = -1
		}
	}()
	return Middle(i)
}

//go:noinline
func Plain(i int) int { time.Sleep(5 * time.Millisecond); return i }

func main() {
	for i := 0; i < 3; i++ {
		fmt.Println("result", Recoverer(i), Plain(i))
	}
}
