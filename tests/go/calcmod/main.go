// calcmod: `go run .` prints "sum A B = S" for each call of calc.Add it makes, then
// "greet NAME N" from main.Greet.
package main

import (
	"fmt"

	"example.com/calcmod/calc"
)

// Greet is of the main package, which go run compiles without DWARF (Go 1.26) unless
// asked: its arguments by name need gotrace's GOFLAGS.
//
//go:noinline
func Greet(name string, n int) {
	fmt.Printf("greet %s %d\n", name, n)
}

func main() {
	for i := 1; i <= 3; i++ {
		fmt.Printf("sum %d %d = %d\n", i, 2*i, calc.Add(i, 2*i))
	}
	Greet("calc", 3)
}
