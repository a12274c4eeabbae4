//go:build cgo

package main

// #include <stdlib.h>
import "C"

// cgo builds link externally: g is found through runtime.tlsg.
var _ = C.abs(1)
