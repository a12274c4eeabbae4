// longstr: Go strings of a few hundred to a few thousand bytes, passed to a function a
// probe reads them in, and printed by the program itself (the oracle of
// test_args.py's "long strings"): each line "own LEN TEXT".
package main

import (
	"fmt"
	"strings"
)

//go:noinline
func Echo(s string, n int) int {
	fmt.Printf("own %d %s\n", n, s)
	return len(s)
}

func main() {
	for _, n := range []int{10, 100, 300, 700, 1000, 3000} {
		var b strings.Builder
		for i := 0; b.Len() < n; i++ {
			fmt.Fprintf(&b, "%d-", i)
		}
		s := b.String()[:n]
		Echo(s, n)
	}
}
