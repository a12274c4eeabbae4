//go:build cgo

// The cgo build: importing "C" links externally (gcc), with the TLS of the C runtime.
package main

/*
static int cadd(int a, int b) { return a + b; }
*/
import "C"

import "fmt"

func init() {
	extras = append(extras, func() { fmt.Fprintf(out, "C %d\n", int(C.cadd(2, 3))) })
}
