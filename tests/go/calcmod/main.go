// calcmod: `go run .` prints "sum A B = S" for each call of calc.Add it makes.
package main

import (
	"fmt"

	"example.com/calcmod/calc"
)

func main() {
	for i := 1; i <= 3; i++ {
		fmt.Printf("sum %d %d = %d\n", i, 2*i, calc.Add(i, 2*i))
	}
}
