// target: the Go program the runtime self-test traces.
//
//	target N SLEEP_MS START_DELAY_MS [GOROUTINES]
//
// Sleeps START_DELAY_MS, then calls main.add(i, 2*i) for i = 0 .. N-1 (forever when
// N < 0), sleeping SLEEP_MS between calls, and exits 0. Prints nothing. With
// GOROUTINES > 1 (throughput runs), that many goroutines each run the loop.
package main

import (
	"os"
	"strconv"
	"sync"
	"time"
)

//go:noinline
func add(a, b int) int {
	return a + b
}

func main() {
	n, _ := strconv.Atoi(os.Args[1])
	sleepMs, _ := strconv.Atoi(os.Args[2])
	delayMs, _ := strconv.Atoi(os.Args[3])
	procs := 1
	if len(os.Args) > 4 {
		procs, _ = strconv.Atoi(os.Args[4])
	}
	time.Sleep(time.Duration(delayMs) * time.Millisecond)
	if procs <= 1 {
		loop(n, sleepMs)
		return
	}
	var wg sync.WaitGroup
	for p := 0; p < procs; p++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			loop(n, sleepMs)
		}()
	}
	wg.Wait()
}

func loop(n, sleepMs int) {
	sum := 0
	for i := 0; n < 0 || i < n; i++ {
		sum += add(i, 2*i)
		if sleepMs > 0 {
			time.Sleep(time.Duration(sleepMs) * time.Millisecond)
		}
	}
	if sum == -1 {
		println("unreachable")
	}
}
