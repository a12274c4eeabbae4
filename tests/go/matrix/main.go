// matrix: the target of tests/runtime/test_gomatrix.py, built by every Go release of the
// matrix, plain, PIE, stripped and with cgo. It is its own oracle: for every call gotrace
// is asked to see, it prints on stderr what gotrace must print on stdout — the values a
// function was called with (fmt's %+v / %v), its goroutine id (the header of
// runtime.Stack), what it returned, the stack at a leaf (runtime.Callers, inlined
// calls expanded), the length of maps and their contents (%+v).
package main

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
)

// Pair is split over six registers (Name 2, N 1, Tags 3); with work's string after it
// there is one register left, so work's slice goes on the stack and its int in R11.
type Pair struct {
	Name string
	N    int
	Tags []string
}

var out = os.Stderr

// lines: how many times work's loop body ran, as "L N" at the end
var lines int

// extras: what files built only by some releases (or with cgo) add to main
var extras []func()

// goid: the goroutine's id as the runtime prints it ("goroutine 18 [running]:").
func goid() int {
	var b [64]byte
	f := strings.Fields(string(b[:runtime.Stack(b[:], false)]))
	id, err := strconv.Atoi(f[1])
	if err != nil || f[0] != "goroutine" {
		panic("runtime.Stack header: " + string(b[:]))
	}
	return id
}

//go:noinline
func work(p Pair, s string, xs []int, n int) (sum int, label string) {
	for _, x := range xs {
		sum += x // the line test_gomatrix probes: it runs len(xs) times a call
	}
	sum += n * p.N
	label = p.Name + "/" + s
	return
}

func callWork(p Pair, s string, xs []int, n int) {
	g := goid()
	lines += len(xs) // the workers run one at a time
	fmt.Fprintf(out, "W %d p=%+v s=%s xs=%v n=%d\n", g, p, s, xs, n)
	sum, label := work(p, s, xs, n)
	fmt.Fprintf(out, "R %d sum=%d label=%s\n", g, sum, label)
	fmt.Fprintf(out, "V %d %d\n", g, sum)
}

//go:noinline
func (p *Pair) Describe(k int) string {
	return p.Name + ":" + strconv.Itoa(p.N*k)
}

//go:noinline
func count(m map[string]int) int { return len(m) }

// kinds: maps of other key kinds, whose %+v fmt sorts by number, false before true
//
//go:noinline
func kinds(is map[int]string, fs map[float64]bool, bs map[bool]int8) int {
	return len(is) + len(fs) + len(bs)
}

// stackOf prints the stack of the function that called it, from that function down
// to main.main (or the goroutine's first function), as "S TAG f1;f2;...".
//
//go:noinline
func stackOf(tag string) {
	pcs := make([]uintptr, 64)
	fr := runtime.CallersFrames(pcs[:runtime.Callers(2, pcs)])
	var names []string
	for {
		f, more := fr.Next()
		names = append(names, f.Function)
		if f.Function == "main.main" || !more {
			break
		}
	}
	fmt.Fprintf(out, "S %s %s\n", tag, strings.Join(names, ";"))
}

//go:noinline
func leafA(x int) int {
	stackOf("a")
	return x + 1
}

// chainB is small enough to be inlined into chainA by the releases that inline
func chainB(x int) int { return leafA(x*2) + 1 }

//go:noinline
func chainA(x int) int { return chainB(x+1) * 3 }

//go:noinline
func leafG(x int) {
	stackOf("g")
}

//go:noinline
func Gen[T any](x T, n int) int {
	if n == 4 {
		leafG(n)
	}
	return n * 2
}

func main() {
	callWork(Pair{Name: "ada", N: 3, Tags: []string{"x", "y"}}, "one", []int{1, 2, 3}, 7)
	callWork(Pair{Name: "bob", N: -2}, "", nil, 5)

	var wg sync.WaitGroup
	for i := 0; i < 3; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			callWork(Pair{Name: "w" + strconv.Itoa(i), N: i, Tags: []string{"t"}}, "worker",
				[]int{i, i * 10}, 100+i)
		}(i)
		wg.Wait() // one at a time: each worker is a goroutine of its own id
	}

	p := &Pair{Name: "eve", N: 6, Tags: []string{"a"}}
	fmt.Fprintf(out, "D %d p=%+v k=%d\n", goid(), p, 4)
	fmt.Fprintf(out, "DR %s\n", p.Describe(4))

	var m0 map[string]int
	m3 := map[string]int{"a": 1, "b": 2, "c": 3}
	m50 := map[string]int{}
	for i := 0; i < 50; i++ {
		m50["k"+strconv.Itoa(i)] = i
	}
	for _, m := range []map[string]int{m0, m3, m50} {
		fmt.Fprintf(out, "M %d\n", len(m))
		fmt.Fprintf(out, "MP %+v\n", m)
		fmt.Fprintf(out, "MK %d %d %d\n", m["b"], m["k42"], m["nope"])
		count(m)
	}
	is := map[int]string{10: "ten", -3: "minus three", 0: "", 7: "seven"}
	fs := map[float64]bool{2.5: true, -1: false, 1e21: true}
	bs := map[bool]int8{true: -1, false: 1}
	fmt.Fprintf(out, "K %+v %+v %+v\n", is, fs, bs)
	fmt.Fprintf(out, "KK [%s] [%s] [%s]\n", is[7], is[-3], is[99])
	kinds(is, fs, bs)

	fmt.Fprintf(out, "G x=%v n=%d\n", 5, 3)
	Gen(5, 3)
	fmt.Fprintf(out, "G x=%v n=%d\n", "hi", 4)
	Gen("hi", 4)

	chainA(2)
	for _, f := range extras {
		f()
	}
	fmt.Fprintf(out, "L %d\n", lines)
}
