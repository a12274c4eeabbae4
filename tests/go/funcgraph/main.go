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

// took notes how long a call took by the program's own clock (inner: from the callee's
// first line to its last), around how long it took by its caller's (outer: the call
// itself, the tracer's probes included); main prints the two of each call at the end
// ("took add1 INNER_US OUTER_US" on stderr), out of the timed calls. A traced duration
// lies between them: the oracle for the durations a tracer reports, whatever the load
// did to the thread between the entry probe and the callee's first line. A call is
// told by its worker and round (arguments a and round). (Not a defer: its wrapper,
// main.addN.deferwrap1, would match main.add*.) A slot taken atomically: no lock to
// wait for inside a timed call.
type note struct {
	name          string
	worker, round int
	us            int64
}

var (
	notes, outers   [1 << 12]note
	nnotes, nouters atomic.Int64
)

func took(name string, worker, round int, t time.Time) {
	d := time.Since(t)
	if i := nnotes.Add(1) - 1; i < int64(len(notes)) {
		notes[i] = note{name, worker, round, d.Microseconds()}
	}
}

func around(name string, worker, round int, t time.Time) {
	d := time.Since(t)
	if i := nouters.Add(1) - 1; i < int64(len(outers)) {
		outers[i] = note{name, worker, round, (d + time.Microsecond - 1).Microseconds()}
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
	took("add3", a, round, t)
	return a + b // @ret:add3
}

//go:noinline
func add2(a, b int, round int) int {
	t := time.Now()
	time.Sleep(time.Duration(2**unit) * time.Millisecond)
	t3 := time.Now()
	r := add3(a, b, round) // @call:add3
	around("add3", a, round, t3)
	took("add2", a, round, t)
	return r // @ret:add2
}

//go:noinline
func add1(a, b int, round int) int {
	t := time.Now()
	time.Sleep(time.Duration(*unit) * time.Millisecond)
	t2 := time.Now()
	r := add2(a, b, round) // @call:add2
	around("add2", a, round, t2)
	took("add1", a, round, t)
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
	t := time.Now()
	r = add1(a, b, round) // @call:add1
	around("add1", a, round, t)
	return r // @ret:add
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
	outer := map[note]int64{}
	for i := int64(0); i < nouters.Load() && i < int64(len(outers)); i++ {
		o := outers[i]
		outer[note{o.name, o.worker, o.round, 0}] = o.us
	}
	for i := int64(0); i < nnotes.Load() && i < int64(len(notes)); i++ {
		n := notes[i]
		if o, ok := outer[note{n.name, n.worker, n.round, 0}]; ok {
			fmt.Fprintf(os.Stderr, "took %s %d %d\n", n.name, n.us, o)
		}
	}
	if *holdFile != "" {
		hold(*holdFile)
	}
}
