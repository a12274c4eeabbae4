// rets: functions whose :return sites are unusual. Nop is a single RET (its entry and
// return are one instruction); Sign has three RETs; Inner.Name is reached through a
// promoted-method wrapper (*Outer).Name that Go may compile to a tail jump. Each is
// called a known number of times: N, 3N (one third per RET), N/2 through the wrapper.
package main

import (
	"fmt"
	"os"
	"strconv"
)

type T struct{}

//go:noinline
func (T) Nop() {}

//go:noinline
func Sign(x int) int {
	if x < 0 {
		return -1
	}
	if x == 0 {
		return 0
	}
	return 1
}

type Inner struct{ name string }

//go:noinline
func (i *Inner) Name() string { return i.name }

type Outer struct {
	*Inner
}

type Namer interface{ Name() string }

func main() {
	n := 10
	if len(os.Args) > 1 {
		n, _ = strconv.Atoi(os.Args[1])
	}
	var t T
	s := 0
	nms := []Namer{&Outer{&Inner{"x"}}, &Inner{"y"}}
	for i := 0; i < n; i++ {
		t.Nop()
		s += Sign(-1) + Sign(0) + Sign(1)
		s += len(nms[i%len(nms)].Name())
	}
	fmt.Println("sum", s)
}
