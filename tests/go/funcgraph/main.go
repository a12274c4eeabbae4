// funcgraph: the go-ftrace demo shape for call-graph mode: main -> doSomething -> add ->
// add1 -> add2 -> add3 with sleeps (1, 2 and 3 units), and (*Student).String.
//
//	funcgraph [-rounds N] [-g GOROUTINES] [-unit MS] [-panic ROUND] [-hold FILE]
//
// -g runs the rounds in that many goroutines at once. -panic makes add3 panic in that
// round (0-based); add recovers, so the program goes on and prints the same lines.
// -hold makes the program wait at the end, in main.hold, until FILE exists (a minute at most).
// Tests find lines by the @call / @ret markers below rather than by number.
package main

import (
	"flag"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

var (
	unit     = flag.Int("unit", 20, "sleep unit in milliseconds")
	panicAt  = flag.Int("panic", -1, "round in which add3 panics (recovered in add)")
	rounds   = flag.Int("rounds", 2, "rounds per goroutine")
	nroutine = flag.Int("g", 1, "goroutines running the rounds at once")
	holdFile = flag.String("hold", "", "at the end, wait until this file exists")
	mu       sync.Mutex
)

type Student struct {
	name string
	age  int
}

//go:noinline
func (s *Student) String() string {
	return fmt.Sprintf("%s is %d", s.name, s.age) // @ret:String
}

// took notes how long a call took by the program's own clock; main prints the notes at
// the end ("took add1 US" on stderr), out of the timed calls: the oracle for the
// durations a tracer reports. (Not a defer: its wrapper, main.addN.deferwrap1, would
// match main.add*.) A slot taken atomically: no lock to wait for inside a timed call.
type note struct {
	name string
	us   int64
}

var (
	notes  [1 << 12]note
	nnotes atomic.Int64
)

func took(name string, t time.Time) {
	d := time.Since(t)
	if i := nnotes.Add(1) - 1; i < int64(len(notes)) {
		notes[i] = note{name, d.Microseconds()}
	}
}

func say(format string, args ...interface{}) {
	mu.Lock()
	fmt.Printf(format, args...)
	mu.Unlock()
}

//go:noinline
func add3(a, b int, round int) int {
	t := time.Now()
	time.Sleep(time.Duration(3**unit) * time.Millisecond)
	if round == *panicAt {
		panic(fmt.Sprintf("add3 failed in round %d", round))
	}
	took("add3", t)
	return a + b // @ret:add3
}

//go:noinline
func add2(a, b int, round int) int {
	t := time.Now()
	time.Sleep(time.Duration(2**unit) * time.Millisecond)
	r := add3(a, b, round) // @call:add3
	took("add2", t)
	return r // @ret:add2
}

//go:noinline
func add1(a, b int, round int) int {
	t := time.Now()
	time.Sleep(time.Duration(*unit) * time.Millisecond)
	r := add2(a, b, round) // @call:add2
	took("add1", t)
	return r // @ret:add1
}

//go:noinline
func add(a, b int, round int) (r int) {
	defer func() {
		if e := recover(); e != nil {
			say("recovered: %v\n", e)
			r = -1
		}
	}()
	return add1(a, b, round) // @call:add1 @ret:add
}

//go:noinline
func doSomething(worker, round int) {
	r := add(worker, round, round) // @call:add
	// A NUL follows the name in memory, so that go-ftrace's rule for it,
	// s.name=*+0(%ax):c64, reads the name and nothing after it.
	name := fmt.Sprintf("Student%d\x00", worker)
	s := &Student{name: name[:len(name)-1], age: 20 + round}
	say("worker %d round %d: add = %d, %s\n", worker, round, r, s.String()) // @call:String
}

// hold waits until path exists. bpftrace names a usym() only while the process lives; a
// test probes hold and creates the file once bpftrace printed that probe's line, so every
// line before it was printed while the program ran. The minute is a bound, not a wait.
//
//go:noinline
func hold(path string) {
	for end := time.Now().Add(time.Minute); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		if _, err := os.Stat(path); err == nil {
			return
		}
	}
}

func main() {
	flag.Parse()
	var wg sync.WaitGroup
	for w := 0; w < *nroutine; w++ {
		wg.Add(1)
		go func(w int) { // @go:worker
			defer wg.Done()
			for i := 0; i < *rounds; i++ {
				doSomething(w, i)
			}
		}(w)
	}
	wg.Wait()
	for i := int64(0); i < nnotes.Load() && i < int64(len(notes)); i++ {
		fmt.Fprintf(os.Stderr, "took %s %d\n", notes[i].name, notes[i].us)
	}
	if *holdFile != "" {
		hold(*holdFile)
	}
}
