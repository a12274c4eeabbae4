// args: functions of many signatures, for -l / -lv and args.NAME: every integer kind,
// bool, strings, slices, pointers to structs, a struct split over registers, an
// interface and an error, named and unnamed results, and a function with more than nine
// integer words of arguments (the rest go on the stack). Each prints its own values, and
// main prints the results: tests/runtime/test_args.py has gotrace print the same lines.
package main

import (
	"errors"
	"fmt"
	"os"
	"sync"
)

type Point struct {
	X, Y int
}

type Student struct {
	Name string
	Age  int
	Tags []string
	Home *Point
}

type Small struct {
	A int8
	B uint16
	C int32
	D bool
}

//go:noinline
func Ints(a int8, b int16, c int32, d int64, e uint8, f uint16, g uint32, h uint64, i int) int {
	fmt.Println("Ints", a, b, c, d, e, f, g, h, i)
	return int(a) + i
}

//go:noinline
func Greet(name string, times int) string {
	fmt.Println("Greet", name, times)
	return name
}

//go:noinline
func (s *Student) String() string {
	fmt.Println("String", s.Name, s.Age, len(s.Tags), s.Tags[1], s.Home.Y)
	fmt.Printf("Student %+v\n", *s) // %+v of s itself would call String
	return fmt.Sprintf("%s/%d", s.Name, s.Age)
}

//go:noinline
func Move(p Point, dx int) (q Point, moved bool) {
	fmt.Println("Move", p.X, p.Y, dx)
	fmt.Printf("MoveP %+v\n", p)
	return Point{p.X + dx, p.Y}, dx != 0
}

//go:noinline
func Pack(s Small, flag bool) Small {
	fmt.Println("Pack", s.A, s.B, s.C, s.D, flag)
	fmt.Printf("PackS %+v\n", s)
	return s
}

//go:noinline
func Sum(xs []int) (total int, n int) {
	for _, x := range xs {
		total += x
	}
	fmt.Println("Sum", len(xs), cap(xs), xs[0], xs[2])
	fmt.Printf("Xs %+v\n", xs)
	return total, len(xs)
}

//go:noinline
func Describe(v interface{}) string {
	s := fmt.Sprintf("%T", v)
	fmt.Println("Describe", s)
	if _, ok := v.(fmt.Stringer); ok { // %+v would call String: a tracer shows (T)(ptr)
		fmt.Printf("DescribeV (%T)(%p)\n", v, v)
	} else {
		fmt.Printf("DescribeV %+v\n", v)
	}
	return s
}

//go:noinline
func Check(n int) error {
	if n < 0 {
		return errors.New("negative")
	}
	return nil
}

//go:noinline
func Many(a, b, c, d, e, f, g, h int, s string, last int) int {
	fmt.Println("Many", a, b, c, d, e, f, g, h, s, last)
	return a + last
}

//go:noinline
func Counts(m map[string]int, c chan int) int {
	fmt.Println("Counts", len(m), len(c), cap(c))
	return len(m) + len(c)
}

//go:noinline
func Mixed(f float64, n int) int {
	fmt.Println("Mixed", f, n)
	return n
}

var (
	mu     sync.Mutex
	locked int
)

// Locked's result is listed twice in Go 1.19's DWARF (a function with a defer). It
// defers a plain function: `defer mu.Unlock()` makes a wrapper that Go 1.19 names
// Locked.func1 and Go 1.22+ Locked.deferwrap1, placed where each release likes.
//
//go:noinline
func Locked(n int) int {
	mu.Lock()
	defer unlock()
	locked += n
	return locked
}

//go:noinline
func unlock() { mu.Unlock() }

func main() {
	n := 1
	if len(os.Args) > 1 {
		fmt.Sscan(os.Args[1], &n)
	}
	for k := 0; k < n; k++ {
		Ints(-8, -16, -32, -64, 8, 16, 32, 64, -1)
		fmt.Println("Greeted", Greet("gopher", 3))
		st := &Student{"Ada", 36, []string{"x", "y"}, &Point{1, 2}}
		_ = st.String()
		q, moved := Move(Point{10, 20}, 5)
		fmt.Println("Moved", q.X, q.Y, moved)
		Pack(Small{-1, 2, -3, true}, true)
		t, c := Sum(make([]int, 3, 5))
		t, c = Sum([]int{1, 2, 3})
		fmt.Println("Summed", t, c)
		Describe(st)
		Describe(42)
		Describe("text")
		fmt.Println("Check", Check(-1))
		fmt.Println("Check", Check(1))
		Many(1, 2, 3, 4, 5, 6, 7, 8, "nine", 10)
		Mixed(1.5, 7)
		Locked(k)
		ch := make(chan int, 4)
		ch <- 1
		ch <- 2
		Counts(map[string]int{"a": 1, "b": 2, "c": 3}, ch)
	}
}
