// burn: CPU burner with a known split, for profile tests (tests/runtime/test_stacks.py).
//
//	burn [-d 3s] [-o OWN.pprof] [-ratio 2]
//	burn -getppid N
//
// One goroutine loops over rounds; each round calls hot with -ratio*U iterations and
// cold with U iterations (by iteration count, not by time), so hot does RATIO/(RATIO+1)
// of the work and cold the rest. Both spend their time in mix, which the compiler
// inlines into each (go build -gcflags=-m: "inlining call to mix"). It runs for -d and,
// with -o, writes its own CPU profile (runtime/pprof) there. At exit it prints
// "rounds=R hot_iters=H cold_iters=C pid=P".
// With -getppid N it only makes N getppid system calls and prints "getppid=N".
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime/pprof"
	"syscall"
	"time"
)

// mix is small enough to be inlined into hot and cold.
func mix(x uint64) uint64 {
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 29
	return x
}

// hot and cold end with a call (to done), so that neither is a leaf: Go gives a leaf
// with no locals no frame pointer, and a frame-pointer walk from a sample taken in it
// would skip its caller (main.main).

//go:noinline
func hot(n int, s uint64) uint64 {
	for i := 0; i < n; i++ {
		s = mix(s + uint64(i))
	}
	return done(s)
}

//go:noinline
func cold(n int, s uint64) uint64 {
	for i := 0; i < n; i++ {
		s = mix(s + uint64(i))
	}
	return done(s)
}

//go:noinline
func done(s uint64) uint64 { return s | 1 }

var sink uint64

func main() {
	d := flag.Duration("d", 3*time.Second, "how long to burn")
	out := flag.String("o", "", "write the program's own CPU profile here")
	ratio := flag.Int("ratio", 2, "hot does RATIO times cold's iterations")
	getppid := flag.Int("getppid", 0, "only make this many getppid system calls")
	flag.Parse()
	if *getppid > 0 {
		for i := 0; i < *getppid; i++ {
			syscall.Getppid()
		}
		fmt.Printf("getppid=%d\n", *getppid)
		return
	}
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
	const unit = 20000 // ~50-100 us of cold per round: many rounds per sample
	var s uint64 = 1
	var rounds, hi, ci int64
	start := time.Now()
	for time.Since(start) < *d {
		s = hot(*ratio*unit, s)
		s = cold(unit, s)
		rounds++
		hi += int64(*ratio * unit)
		ci += unit
	}
	sink = s
	fmt.Printf("rounds=%d hot_iters=%d cold_iters=%d pid=%d\n", rounds, hi, ci, os.Getpid())
}
