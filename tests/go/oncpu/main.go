// oncpu: calls whose time on a CPU the program measures itself, the oracle of gotrace's
// oncpu (tests/runtime/test_oncpu.py).
//
//	GODEBUG=asyncpreemptoff=1 oncpu [-sleep MS] [-spin MS] [-g N] [-rounds R]
//
// What a thread's CPU clock counts is a goroutine's own time only while the Go scheduler
// does not run on that thread: a preemption puts the scheduler's work (the runtime's
// g0, no goroutine's) on the thread's clock, and under emulation that work can be a
// tenth of the time (spinning for a lock whose holder's virtual CPU is stopped). So the
// measured stretches have no preemption point: asynchronous preemption is off (the
// GODEBUG above, which the test sets), the clocks are read by nosplit raw system calls,
// and compute is inlined; goroutines change threads only where the program says
// (runtime.Gosched between pieces of work).
//
// Locked: a goroutine locked to its thread (runtime.LockOSThread), so that its thread's
// CPU time is its own, calls Sleepy (sleeps -sleep ms, on a CPU for almost none of it)
// and Busy (computes for -spin ms of its thread's CPU time) -rounds times, reads
// CLOCK_THREAD_CPUTIME_ID and the wall clock around each call and prints
// "own NAME I CPU_NS WALL_NS INSIDE_NS" on stderr (INSIDE: what Busy measured of itself,
// between its first and last line).
// Shared: then -g goroutines, each locked to its thread and with a P each (GOMAXPROCS
// -g for the phase: more threads computing than CPUs, so the kernel makes them take
// turns), call Work once with the work of one Busy call, at once, and print the same
// line with their goroutine id for I. Then -g goroutines free to move between threads
// (more of them than GOMAXPROCS, the machine's) do the same work in Spread, in pieces
// with a runtime.Gosched between (where they change threads), each measuring the CPU
// time of its pieces on the thread it ran them on, and print
// "own Spread GOID THREADS WALL_NS PIECES_NS" (THREADS: how many threads ran its
// pieces); the program then prints "own Phase 0 PROCESS_CPU_NS WALL_NS 0"
// (CLOCK_PROCESS_CPUTIME_ID around the phase: every thread's, the scheduler's and the
// runtime's own included).
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
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
	mu      sync.Mutex // sink's, for the goroutines of a phase
)

const (
	clockProcessCPU = 2 // CLOCK_PROCESS_CPUTIME_ID
	clockThreadCPU  = 3 // CLOCK_THREAD_CPUTIME_ID
)

// cpuNow reads CLOCK; nosplit and a raw system call: not a point where the goroutine
// can be preempted, nor one where the scheduler takes its P.
//
//go:nosplit
func cpuNow(clock int) int64 {
	var ts syscall.Timespec
	syscall.RawSyscall(syscall.SYS_CLOCK_GETTIME, uintptr(clock), uintptr(unsafe.Pointer(&ts)), 0)
	return ts.Sec*1e9 + ts.Nsec
}

//go:nosplit
func gettid() int {
	t, _, _ := syscall.RawSyscall(syscall.SYS_GETTID, 0, 0, 0)
	return int(t)
}

// goid is the calling goroutine's id, as runtime.Stack's header says it.
func goid() int {
	b := make([]byte, 64)
	b = b[:runtime.Stack(b, false)]
	id, _ := strconv.Atoi(strings.Fields(string(b))[1])
	return id
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
func Sleepy(i int) {
	time.Sleep(time.Duration(*sleepMS) * time.Millisecond)
}

// inside: the CPU time a call measured of itself, between its first and last line
// (its entry and return probes are outside it).
var inside int64

// Busy computes until its thread has had ms of CPU time; it returns the rounds done.
//
//go:noinline
func Busy(ms, i int) int {
	start := cpuNow(clockThreadCPU)
	n := 0
	for cpuNow(clockThreadCPU)-start < int64(ms)*1e6 {
		sink += compute(20000)
		n += 20000
	}
	inside = cpuNow(clockThreadCPU) - start
	return n
}

// Work does n rounds (Busy's of one call): on a locked thread, measuring itself (its
// result: the goroutines of a phase run at once).
//
//go:noinline
func Work(n, i int) int64 {
	start := cpuNow(clockThreadCPU)
	r := compute(n)
	in := cpuNow(clockThreadCPU) - start // before the lock, which may wait
	mu.Lock()
	sink += r
	mu.Unlock()
	return in
}

// pieces of Spread's work: a Gosched between two, where the goroutine may change threads
const pieces = 50

// Spread does the same in a goroutine free to move between threads, in pieces; it
// returns the CPU time of its pieces (each read on the one thread it ran on: nothing in
// a piece can move it) and how many threads ran them.
//
//go:noinline
func Spread(n int) (int64, int) {
	var r uint64
	var in int64
	tids := map[int]bool{}
	for k := 0; k < pieces; k++ {
		t, c := gettid(), cpuNow(clockThreadCPU)
		r += compute(n / pieces)
		c2, t2 := cpuNow(clockThreadCPU), gettid()
		if t2 != t { // cannot be, with nothing in the piece to preempt it
			fmt.Fprintf(os.Stderr, "Spread: a piece moved from thread %d to %d: "+
				"run with GODEBUG=asyncpreemptoff=1\n", t, t2)
			os.Exit(3)
		}
		in += c2 - c
		tids[t] = true
		runtime.Gosched()
	}
	mu.Lock()
	sink += r
	mu.Unlock()
	return in, len(tids)
}

// own prints "own NAME I CPU WALL INSIDE": the thread's CPU time and the wall time
// around f (its probes included), and what f measured of itself.
func own(name string, i int, f func()) {
	inside = 0
	c, w := cpuNow(clockThreadCPU), time.Now()
	f()
	fmt.Fprintf(os.Stderr, "own %s %d %d %d %d\n", name, i, cpuNow(clockThreadCPU)-c,
		time.Since(w).Nanoseconds(), inside)
}

// phase runs f in nwork goroutines at once, each locked to its thread or not.
func phase(locked bool, f func(i int)) {
	var wg sync.WaitGroup
	start := make(chan bool)
	for i := 0; i < *nwork; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			if locked {
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
			}
			<-start
			f(i)
		}(i)
	}
	close(start)
	wg.Wait()
}

func main() {
	flag.Parse()
	work := 0
	done := make(chan bool)
	go func() {
		runtime.LockOSThread()
		for r := 0; r < *rounds; r++ {
			own("Sleepy", r, func() { Sleepy(r) })
			own("Busy", r, func() { work = Busy(*spinMS, r) })
		}
		done <- true
	}()
	<-done
	// a P for each locked goroutine: all compute at once, more threads than CPUs
	procs := runtime.GOMAXPROCS(*nwork)
	phase(true, func(i int) {
		c, w := cpuNow(clockThreadCPU), time.Now()
		in := Work(work, i)
		mu.Lock()
		fmt.Fprintf(os.Stderr, "own Work %d %d %d %d\n", goid(), cpuNow(clockThreadCPU)-c,
			time.Since(w).Nanoseconds(), in)
		mu.Unlock()
	})
	runtime.GOMAXPROCS(procs)
	c, w := cpuNow(clockProcessCPU), time.Now()
	phase(false, func(int) {
		w := time.Now()
		in, threads := Spread(work)
		mu.Lock()
		fmt.Fprintf(os.Stderr, "own Spread %d %d %d %d\n", goid(), threads,
			time.Since(w).Nanoseconds(), in)
		mu.Unlock()
	})
	fmt.Fprintf(os.Stderr, "own Phase 0 %d %d 0\n", cpuNow(clockProcessCPU)-c, time.Since(w).Nanoseconds())
	fmt.Printf("done sink=%d\n", sink&1)
}
