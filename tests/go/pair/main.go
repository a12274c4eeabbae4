// pair: main.Add(p *Pair) is called once per B in 1..N (N = os.Args[1], default 5).
// Prints nothing on stdout so a tracer's output can be compared exactly.
package main

import (
	"fmt"
	"os"
	"strconv"
)

type Pair struct{ A, B int64 }

//go:noinline
func Add(p *Pair) int64 { return p.A + p.B }

func main() {
	n := 5
	if len(os.Args) > 1 {
		n, _ = strconv.Atoi(os.Args[1])
	}
	var sum int64
	for i := 1; i <= n; i++ {
		sum += Add(&Pair{A: int64(100 * i), B: int64(i)})
	}
	fmt.Fprintln(os.Stderr, "sum", sum)
}
