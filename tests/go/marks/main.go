// marks: N goroutines each call Mark(goid, tag) with their own goroutine id, parsed
// from runtime.Stack, so a tracer's goid can be checked against the first argument.
package main

import (
	"bytes"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync"
)

//go:noinline
func Mark(goid, tag int) int { return goid + tag }

func curGoid() int {
	var buf [64]byte
	n := runtime.Stack(buf[:], false)
	f := bytes.Fields(buf[:n]) // "goroutine 18 [running]:"
	id, _ := strconv.Atoi(string(f[1]))
	return id
}

func main() {
	n := 8
	if len(os.Args) > 1 {
		n, _ = strconv.Atoi(os.Args[1])
	}
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(tag int) {
			defer wg.Done()
			id := curGoid()
			for k := 0; k < 5; k++ {
				Mark(id, tag)
				runtime.Gosched()
			}
		}(i)
	}
	wg.Wait()
	Mark(curGoid(), -1)
	fmt.Fprintln(os.Stderr, "marks: done")
}
