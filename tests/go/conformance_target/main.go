// conformance_target: a deterministic call pattern for tests/conformance (the same
// script runs under bpftrace 0.17 as uprobe:BIN:main.X and under gotrace as
// go:BIN:main.X:entry). Every traced function is a small noinline leaf, so it has no
// stack-growth check and a probe on its first instruction fires exactly once per call.
// Nothing is printed on stdout (both tools share it with the traced command).
//
//	conftarget calls      work(i, i*i) for i in 0..99, then edge values (see below)
//	conftarget strings    name(s) for a fixed list of strings
//	conftarget many N     work(i%7 - 3, i) for i in 0..N-1
//	conftarget syscalls N N getppid() calls, then N-1 ... 0 byte writes to /dev/null
//	conftarget nested     outer (3 calls) -> middle (6) -> inner (12)
//	conftarget tri N      work(k, j) for j in 0..k, k in 0..N-1: key k is seen k+1 times
package main

import (
	"fmt"
	"math"
	"os"
	"strconv"
	"syscall"
)

//go:noinline
func work(a, b int) int { return a ^ b }

//go:noinline
func edge(a int) int { return a + 1 }

//go:noinline
func name(s string) int { return len(s) }

//go:noinline
func inner(a int) int { return a * 2 }

//go:noinline
func middle(a int) int { return inner(a) + inner(a+1) }

//go:noinline
func outer(a int) int { return middle(a) + middle(a+1) }

var sink int

func main() {
	mode := "calls"
	if len(os.Args) > 1 {
		mode = os.Args[1]
	}
	n := 100
	if len(os.Args) > 2 {
		v, err := strconv.Atoi(os.Args[2])
		if err != nil {
			fmt.Fprintln(os.Stderr, "bad N:", os.Args[2])
			os.Exit(2)
		}
		n = v
	}
	switch mode {
	case "calls":
		for i := 0; i < 100; i++ {
			sink += work(i, i*i)
		}
		for _, v := range []int{0, -1, 1, -100, 100, math.MaxInt64, math.MinInt64,
			math.MaxInt32, math.MinInt32, 1 << 40, -(1 << 40), 7, -7, 0} {
			sink += edge(v)
		}
	case "strings":
		// alpha 5 times, beta 4, gamma 3, "" 2, the long one once
		for _, s := range []string{"alpha", "beta", "gamma", "alpha", "", "beta",
			"alpha", "gamma", "beta", "a-much-longer-string-with-dashes", "alpha", "",
			"beta", "gamma", "alpha"} {
			sink += name(s)
		}
	case "many":
		for i := 0; i < n; i++ {
			sink += work(i%7-3, i)
		}
	case "syscalls":
		for i := 0; i < n; i++ {
			syscall.Getppid() // never called by the Go runtime itself (getpid is: signalM)
		}
		f, err := os.OpenFile("/dev/null", os.O_WRONLY, 0)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		buf := make([]byte, n)
		for i := n - 1; i >= 0; i-- {
			syscall.Write(int(f.Fd()), buf[:i])
		}
		f.Close()
	case "tri":
		for k := 0; k < n; k++ {
			for j := 0; j <= k; j++ {
				sink += work(k, j)
			}
		}
	case "nested":
		for i := 0; i < 3; i++ {
			sink += outer(i)
		}
	default:
		fmt.Fprintln(os.Stderr, "unknown mode", mode)
		os.Exit(2)
	}
}
