// goparents: goroutines that say who they are and who created them, from the runtime's
// own traceback (runtime.Stack: "goroutine N [running]:" and "created by F in goroutine
// M", Go 1.21+): the oracle of the goroutines tool on a stripped build (test_gotypes).
package main

import (
	"fmt"
	"os"
	"regexp"
	"runtime"
	"strconv"
	"sync"
	"time"
)

var (
	selfRe    = regexp.MustCompile(`^goroutine (\d+) `)
	creatorRe = regexp.MustCompile(`created by (\S+) in goroutine (\d+)`)
	mu        sync.Mutex
)

func report() {
	buf := make([]byte, 4096)
	st := string(buf[:runtime.Stack(buf, false)])
	self := selfRe.FindStringSubmatch(st)
	by := creatorRe.FindStringSubmatch(st)
	if self == nil || by == nil {
		fmt.Fprintf(os.Stderr, "unexpected stack:\n%s\n", st)
		os.Exit(1)
	}
	parent, _ := strconv.Atoi(by[2])
	mu.Lock()
	fmt.Printf("goroutine %s: created by %s in goroutine %d\n", self[1], by[1], parent)
	mu.Unlock()
}

func child(wg *sync.WaitGroup) {
	defer wg.Done()
	report()
}

func parent(n int, wg *sync.WaitGroup) {
	defer wg.Done()
	report()
	var kids sync.WaitGroup
	for i := 0; i < n; i++ {
		kids.Add(1)
		go child(&kids)
	}
	kids.Wait()
}

func main() {
	time.Sleep(200 * time.Millisecond) // the probes attach while main sleeps
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go parent(3+i, &wg)
	}
	wg.Wait()
}
