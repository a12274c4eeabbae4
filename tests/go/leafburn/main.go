// leafburn: CPU burner whose hot code gives a frame-pointer walk nothing to go on, for
// the unwinding tests of tests/runtime/test_stacks.py.
//
//	leafburn [-d 2s] [-o OWN.pprof] [-mode leaf|sha]
//
// -mode leaf: main.main calls leafA and leafB, frameless leaves (no locals, no calls:
// Go gives them no frame pointer, go tool objdump shows no PUSHQ BP), in a 2:1 split.
// -mode sha: main.main calls hashloop, which hashes with crypto/sha256: the time is in
// its assembly, which uses BP as a data register.
// With -o it writes its own CPU profile (runtime/pprof) for the run. At exit it prints
// "mode=M rounds=R pid=P".
package main

import (
	"crypto/sha256"
	"flag"
	"fmt"
	"os"
	"runtime/pprof"
	"time"
)

//go:noinline
func leafA(x uint64) uint64 {
	for i := 0; i < 4000; i++ {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	return x
}

//go:noinline
func leafB(x uint64) uint64 {
	for i := 0; i < 2000; i++ {
		x ^= x << 5
		x ^= x >> 9
		x ^= x << 23
	}
	return x
}

var buf [16384]byte

//go:noinline
func hashloop(n int) byte {
	var s byte
	for i := 0; i < n; i++ {
		buf[0] = s
		sum := sha256.Sum256(buf[:])
		s ^= sum[0]
	}
	return s
}

var sink uint64

func main() {
	d := flag.Duration("d", 2*time.Second, "how long to burn")
	out := flag.String("o", "", "write the program's own CPU profile here")
	mode := flag.String("mode", "leaf", "leaf or sha")
	flag.Parse()
	if *out != "" {
		f, err := os.Create(*out)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		defer f.Close()
		defer pprof.StopCPUProfile()
	}
	var x uint64 = 1
	var rounds int64
	start := time.Now()
	for time.Since(start) < *d {
		if *mode == "sha" {
			x += uint64(hashloop(4))
		} else {
			x = leafA(x)
			x = leafB(x)
		}
		rounds++
	}
	sink = x
	fmt.Printf("mode=%s rounds=%d pid=%d\n", *mode, rounds, os.Getpid())
}
