// generic: generic functions whose instances' names nest brackets
// (keysOf[go.shape.map[string][]string,...]) and hold closures (keysOf[...].func1), as
// real servers' do (Caddy's normalizeLoggerNames: maps.Keys over a map of string
// slices). Its own oracle: "K N" on stderr for each call of keysOf (N keys, so N calls
// of its closure), "C N" at the end for the closure's calls.
package main

import (
	"fmt"
	"os"
)

type Names map[string][]string

var calls int

// each calls f for every key of m: not inlined, so f is called through its value and
// keysOf's closure stays a function of its own.
//
//go:noinline
func each[M ~map[K]V, K comparable, V any](m M, f func(K)) {
	for k := range m {
		f(k)
	}
}

//go:noinline
func keysOf[M ~map[K]V, K comparable, V any](m M) []K {
	var ks []K
	each(m, func(k K) {
		ks = append(ks, k)
		calls++
	})
	return ks
}

func main() {
	n := Names{"a": {"x"}, "b": {"y", "z"}, "c": nil}
	for i := 0; i < 3; i++ {
		fmt.Fprintf(os.Stderr, "K %d\n", len(keysOf(n)))
	}
	fmt.Fprintf(os.Stderr, "K %d\n", len(keysOf(map[int]string{1: "one"})))
	fmt.Fprintf(os.Stderr, "C %d\n", calls)
}
