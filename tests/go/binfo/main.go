// binfo: target for tests/unit/binfo_test.c. Every function of interest is
// noinline and reachable from main, so the linker keeps it and the compiler
// emits each prologue shape of Go 1.17+ amd64:
//
//	main.Add        leaf, frameless: no stack check at all
//	main.add        small frame:  cmp 0x10(%r14),%rsp; jbe
//	main.large      frame > 128:  lea -N(%rsp),%r12; cmp 0x10(%r14),%r12; jbe
//	main.huge       frame > 4096: mov %rsp,%r12; sub $N,%r12; jb; cmp; jbe
//	main.nosplit    //go:nosplit with a call: frame but no check
//	main.multiRet   several RET instructions
package main

import (
	"fmt"
	"os"
)

type Student struct {
	name string
	age  int
}

//go:noinline
func (s *Student) String() string {
	return fmt.Sprintf("name=%s age=%d", s.name, s.age)
}

type Rect struct{ w, h int }

//go:noinline
func (r Rect) Area() int { return r.w * r.h }

//go:noinline
func Add(a, b int) int { return a + b }

//go:noinline
func add(a, b int) int { return add1(a, b) + 1 }

//go:noinline
func add1(a, b int) int { return add2(a, b) * 2 }

//go:noinline
func add2(a, b int) int { return Add(a, b) - 3 }

//go:noinline
func sink(p []int) int { return len(p) + p[0] }

//go:noinline
func large(n int) int {
	var buf [64]int
	for i := range buf {
		buf[i] = i * n
	}
	return sink(buf[:])
}

//go:noinline
func huge(n int) int {
	var buf [1024]int
	for i := range buf {
		buf[i] = i ^ n
	}
	return sink(buf[:])
}

//go:nosplit
//go:noinline
func nosplit(n int) int {
	var x [4]int
	x[n&3] = n
	return sink(x[:])
}

//go:noinline
func multiRet(x int) int {
	if x < 0 {
		return sink([]int{x, 1})
	}
	if x == 7 {
		return 70
	}
	return Add(x, 3)
}

//go:noinline
func Map[T, U any](s []T, f func(T) U) []U {
	r := make([]U, 0, len(s))
	for _, v := range s {
		r = append(r, f(v))
	}
	return r
}

func main() {
	n := len(os.Args)
	s := &Student{name: "ann", age: n}
	total := add(n, 2) + large(n) + huge(n) + nosplit(n) + multiRet(n) + Rect{n, 2}.Area()
	double := func(v int) int { return v*2 + n }
	total += len(Map([]int{1, 2, n}, double))
	fmt.Println(s.String(), total)
}
