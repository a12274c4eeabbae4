// spin: a long-running target for -p: calls Tick every 10 ms until it has run for
// the number of seconds in os.Args[1] (default 30), then prints ok=N and exits 0.
package main

import (
	"fmt"
	"os"
	"strconv"
	"time"
)

//go:noinline
func Tick(i int) int { return i * 2 }

func main() {
	secs := 30
	if len(os.Args) > 1 {
		secs, _ = strconv.Atoi(os.Args[1])
	}
	fmt.Printf("pid=%d\n", os.Getpid())
	deadline := time.Now().Add(time.Duration(secs) * time.Second)
	n := 0
	for time.Now().Before(deadline) {
		n += Tick(n) & 1
		n++
		time.Sleep(10 * time.Millisecond)
	}
	fmt.Printf("ok=%d\n", n)
}
