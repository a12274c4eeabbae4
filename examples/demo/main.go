// demo: the go-ftrace demo shape: main -> doSomething -> add -> add1 -> add2 -> add3,
// with short sleeps, plus (*Student).String. Used by the README's first command.
package main

import (
	"fmt"
	"os"
	"strconv"
	"time"
)

type Student struct {
	name string
	age  int64
}

//go:noinline
func (s *Student) String() string { return fmt.Sprintf("%s is %d", s.name, s.age) }

//go:noinline
func add(a, b int) int { return add1(a, b) }

//go:noinline
func add1(a, b int) int { time.Sleep(time.Millisecond); return add2(a, b) }

//go:noinline
func add2(a, b int) int { return add3(a, b) }

//go:noinline
func add3(a, b int) int { return a + b }

//go:noinline
func doSomething(i int) {
	add(i, 2*i)
	s := &Student{name: "student" + strconv.Itoa(i), age: int64(18 + i)}
	_ = s.String()
}

func main() {
	n := 3
	if len(os.Args) > 1 {
		n, _ = strconv.Atoi(os.Args[1])
	}
	for i := 1; i <= n; i++ {
		doSomething(i)
		time.Sleep(10 * time.Millisecond)
	}
	fmt.Fprintln(os.Stderr, "demo: done")
}
