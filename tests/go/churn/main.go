// churn: N short-lived goroutines (default 100000), each calling Short once, in
// batches so that only a few hundred live at a time.
package main

import (
	"fmt"
	"os"
	"strconv"
	"sync"
)

//go:noinline
func Short(i int) int { return i + 1 }

func main() {
	n := 100000
	if len(os.Args) > 1 {
		n, _ = strconv.Atoi(os.Args[1])
	}
	var sum int64
	var mu sync.Mutex
	for done := 0; done < n; {
		batch := 500
		if n-done < batch {
			batch = n - done
		}
		var wg sync.WaitGroup
		for i := 0; i < batch; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				v := Short(i)
				mu.Lock()
				sum += int64(v)
				mu.Unlock()
			}(done + i)
		}
		wg.Wait()
		done += batch
	}
	fmt.Fprintln(os.Stderr, "churn: sum", sum)
}
