// ctapp: a service shaped for tracing from outside: it says "ready pid N" on stderr,
// then for each line of stdin calls handle with the line's number and word and writes
// what it got ("H {N:1 Word:a}", fmt's %+v: the oracle of a tracer's values). It exits at
// the end of stdin with status 0, or with the status a line "exit N" asks for.
package main

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

type Req struct {
	N    int
	Word string
}

//go:noinline
func handle(r Req) int {
	fmt.Fprintf(os.Stderr, "H %+v\n", r)
	return r.N * 2
}

//go:noinline
func serve(line string, n int) {
	handle(Req{N: n, Word: line})
}

func main() {
	fmt.Fprintf(os.Stderr, "ready pid %d\n", os.Getpid())
	in := bufio.NewScanner(os.Stdin)
	for n := 1; in.Scan(); n++ {
		line := strings.TrimSpace(in.Text())
		if code, ok := strings.CutPrefix(line, "exit "); ok {
			c, _ := strconv.Atoi(code)
			os.Exit(c)
		}
		serve(line, n)
	}
}
