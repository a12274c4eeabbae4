// funcgraph: the go-ftrace demo shape for call-graph mode: main -> doSomething -> add ->
// add1 -> add2 -> add3 with sleeps (1, 2 and 3 units), and (*Student).String.
//
//	funcgraph [-rounds N] [-g GOROUTINES] [-unit MS] [-panic ROUND]
//
// -g runs the rounds in that many goroutines at once. -panic makes add3 panic in that
// round (0-based); add recovers, so the program goes on and prints the same lines.
// Tests find lines by the @call / @ret markers below rather than by number.
package main

import (
	"flag"
	"fmt"
	"sync"
	"time"
)

var (
	unit     = flag.Int("unit", 20, "sleep unit in milliseconds")
	panicAt  = flag.Int("panic", -1, "round in which add3 panics (recovered in add)")
	rounds   = flag.Int("rounds", 2, "rounds per goroutine")
	nroutine = flag.Int("g", 1, "goroutines running the rounds at once")
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

func say(format string, args ...interface{}) {
	mu.Lock()
	fmt.Printf(format, args...)
	mu.Unlock()
}

//go:noinline
func add3(a, b int, round int) int {
	time.Sleep(time.Duration(3**unit) * time.Millisecond)
	if round == *panicAt {
		panic(fmt.Sprintf("add3 failed in round %d", round))
	}
	return a + b // @ret:add3
}

//go:noinline
func add2(a, b int, round int) int {
	time.Sleep(time.Duration(2**unit) * time.Millisecond)
	return add3(a, b, round) // @call:add3 @ret:add2
}

//go:noinline
func add1(a, b int, round int) int {
	time.Sleep(time.Duration(*unit) * time.Millisecond)
	return add2(a, b, round) // @call:add2 @ret:add1
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

func main() {
	flag.Parse()
	var wg sync.WaitGroup
	for w := 0; w < *nroutine; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < *rounds; i++ {
				doSomething(w, i)
			}
		}(w)
	}
	wg.Wait()
}
