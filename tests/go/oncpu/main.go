// oncpu: calls whose time on a CPU the program measures itself, the oracle of gotrace's
// oncpu (tests/runtime/test_oncpu.py).
//
//	oncpu [-sleep MS] [-spin MS] [-g N] [-rounds R]
//
// Locked: a goroutine locked to its thread (runtime.LockOSThread), so that its thread's
// CPU time is its own, calls Sleepy (sleeps -sleep ms, on a CPU for almost none of it)
// and Busy (computes for -spin ms of its thread's CPU time) -rounds times, reads
// CLOCK_THREAD_CPUTIME_ID and the wall clock around each call and prints
// "own NAME CPU_NS WALL_NS" on stderr.
// Shared: then -g goroutines (more than GOMAXPROCS, so they take turns on the CPUs and
// move between threads) each call Work once, with the work Busy did in one call, at
// once; the program prints "own shared PROCESS_CPU_NS WALL_NS" (CLOCK_PROCESS_CPUTIME_ID
// around the phase: what the Work calls' on-CPU times add up to).
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"sync"
	"syscall"
	"time"
	"unsafe"
)

var (
	sleepMS = flag.Int("sleep", 60, "Sleepy sleeps this long (ms)")
	spinMS  = flag.Int("spin", 60, "Busy computes for this much CPU time (ms)")
	nwork   = flag.Int("g", 4, "goroutines of the shared phase")
	rounds  = flag.Int("rounds", 2, "Sleepy and Busy calls of the locked phase")
	sink    uint64
)

const (
	clockProcessCPU = 2 // CLOCK_PROCESS_CPUTIME_ID
	clockThreadCPU  = 3 // CLOCK_THREAD_CPUTIME_ID
)

func cpuNow(clock int) int64 {
	var ts syscall.Timespec
	syscall.Syscall(syscall.SYS_CLOCK_GETTIME, uintptr(clock), uintptr(unsafe.Pointer(&ts)), 0)
	return ts.Nano()
}

func mix(x uint64) uint64 {
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 29
	return x
}

// compute runs n rounds of mix; no allocation, no call into the runtime.
func compute(n int) uint64 {
	x := uint64(n)
	for i := 0; i < n; i++ {
		x = mix(x + uint64(i))
	}
	return x
}

//go:noinline
func Sleepy() {
	time.Sleep(time.Duration(*sleepMS) * time.Millisecond)
}

// Busy computes until its thread has had ms of CPU time; it returns the rounds done.
//
//go:noinline
func Busy(ms int) int {
	start := cpuNow(clockThreadCPU)
	n := 0
	for cpuNow(clockThreadCPU)-start < int64(ms)*1e6 {
		sink += compute(20000)
		n += 20000
	}
	return n
}

//go:noinline
func Work(n int) {
	sink += compute(n)
}

func own(name string, f func()) {
	c, w := cpuNow(clockThreadCPU), time.Now()
	f()
	fmt.Fprintf(os.Stderr, "own %s %d %d\n", name, cpuNow(clockThreadCPU)-c, time.Since(w).Nanoseconds())
}

func main() {
	flag.Parse()
	work := 0
	done := make(chan bool)
	go func() {
		runtime.LockOSThread()
		for r := 0; r < *rounds; r++ {
			own("Sleepy", Sleepy)
			own("Busy", func() { work = Busy(*spinMS) })
		}
		done <- true
	}()
	<-done

	var wg sync.WaitGroup
	start := make(chan bool)
	for i := 0; i < *nwork; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			Work(work)
		}()
	}
	c, w := cpuNow(clockProcessCPU), time.Now()
	close(start)
	wg.Wait()
	fmt.Fprintf(os.Stderr, "own shared %d %d\n", cpuNow(clockProcessCPU)-c, time.Since(w).Nanoseconds())
	fmt.Printf("done sink=%d\n", sink&1)
}
