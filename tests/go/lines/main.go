// lines: prints its own call stack as the Go runtime sees it (pc, function, file, line;
// inlined calls expanded), an oracle for gotrace's PC -> source line lookups. inner and
// middle are inlined into outer. The first line is the run-time address of main.outer
// (a PIE's load bias is that minus its link-time address).
package main

import (
	"fmt"
	"reflect"
	"runtime"
)

//go:noinline
func leaf() {
	pcs := make([]uintptr, 32)
	n := runtime.Callers(1, pcs)
	frames := runtime.CallersFrames(pcs[:n])
	for {
		f, more := frames.Next()
		fmt.Printf("%#x %s %s %d\n", f.PC, f.Function, f.File, f.Line)
		if !more {
			break
		}
	}
}

func inner() { leaf() }

func middle() { inner() }

//go:noinline
func outer() { middle() }

func main() {
	fmt.Printf("%#x main.outer\n", reflect.ValueOf(outer).Pointer())
	outer()
}
