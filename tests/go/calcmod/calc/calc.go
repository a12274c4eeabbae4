// Package calc: what test_targets traces through `go test` and `go run`.
package calc

//go:noinline
func Add(a, b int) int { return a + b }
