// workshop: the program gotrace's tutorial and tools/ are shown on. It serves HTTP on
// 127.0.0.1 and drives load at itself for a while, through handlers that are slow,
// contend a mutex, block on channels, allocate, panic and recover, and spawn
// goroutines, then prints what it did and exits.
//
//	workshop [-d 3s] [-c 4] [-addr 127.0.0.1:0]
//
// Every handler calls a named, never-inlined function, so that probes have stable
// names: main.slowWork, main.lockedWork, main.chanWork, main.allocWork,
// main.mayPanic, main.spawnWork, main.Checkout (typed arguments).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// Order is what /checkout works on: a struct argument for args.o.Item and friends.
type Order struct {
	ID    int
	Item  string
	Qty   int
	Price int64
}

var errOutOfStock = errors.New("out of stock")

var (
	mu      sync.Mutex // contended by /lock
	counter int
	jobs    = make(chan int) // unbuffered: /chan blocks until the worker takes it
	done    = make(chan int)
	sink    [][]byte
	sinkMu  sync.Mutex
	spawned atomic.Int64
)

//go:noinline
func slowWork(ms int) int {
	time.Sleep(time.Duration(ms) * time.Millisecond)
	return ms
}

//go:noinline
func fastWork(n int) int {
	s := 0
	for i := 0; i < n; i++ {
		s += i
	}
	return s
}

//go:noinline
func lockedWork(hold time.Duration) int {
	mu.Lock()
	defer mu.Unlock()
	time.Sleep(hold)
	counter++
	return counter
}

//go:noinline
func chanWork(v int) int {
	jobs <- v
	return <-done
}

func worker() {
	for v := range jobs {
		time.Sleep(2 * time.Millisecond)
		done <- v * 2
	}
}

//go:noinline
func allocWork(size int) int {
	b := make([]byte, size)
	b[0] = 1
	sinkMu.Lock()
	sink = append(sink, b)
	if len(sink) > 64 {
		sink = sink[:0]
	}
	sinkMu.Unlock()
	return len(b)
}

//go:noinline
func mayPanic(i int) (r int) {
	defer func() {
		if e := recover(); e != nil {
			r = -1
		}
	}()
	if i%2 == 0 {
		panic(fmt.Sprintf("odd request %d", i))
	}
	return i
}

//go:noinline
func spawnWork(n int) int {
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			fastWork(1000 * (i + 1))
			spawned.Add(1)
		}(i)
	}
	wg.Wait()
	return n
}

// Checkout fails for the items it has none of.
//
//go:noinline
func Checkout(o Order, note string) (int64, error) {
	if o.Item == "umbrella" {
		return 0, errOutOfStock
	}
	return int64(o.Qty) * o.Price, nil
}

func handler(name string, f func(i int) int) http.HandlerFunc {
	var n atomic.Int64
	return func(w http.ResponseWriter, r *http.Request) {
		v := f(int(n.Add(1)))
		fmt.Fprintf(w, "%s %d\n", name, v)
	}
}

var items = []string{"book", "lamp", "umbrella", "pen"}

func routes() *http.ServeMux {
	m := http.NewServeMux()
	m.HandleFunc("/fast", handler("fast", func(i int) int { return fastWork(100) }))
	m.HandleFunc("/slow", handler("slow", func(i int) int { return slowWork(20 + i%3*5) }))
	m.HandleFunc("/lock", handler("lock", func(i int) int { return lockedWork(time.Millisecond) }))
	m.HandleFunc("/chan", handler("chan", chanWork))
	m.HandleFunc("/alloc", handler("alloc", func(i int) int { return allocWork(64 << (i % 12)) }))
	m.HandleFunc("/panic", handler("panic", mayPanic))
	m.HandleFunc("/spawn", handler("spawn", func(i int) int { return spawnWork(1 + i%4) }))
	m.HandleFunc("/checkout", handler("checkout", func(i int) int {
		o := Order{ID: i, Item: items[i%len(items)], Qty: 1 + i%3, Price: 250}
		total, err := Checkout(o, "gift")
		if err != nil {
			return -1
		}
		return int(total)
	}))
	return m
}

var paths = []string{"/fast", "/slow", "/lock", "/chan", "/alloc", "/panic", "/spawn", "/checkout"}

// client asks for every path in turn until the deadline.
func client(base string, until time.Time, reqs *atomic.Int64, wg *sync.WaitGroup) {
	defer wg.Done()
	for i := 0; time.Now().Before(until); i++ {
		resp, err := http.Get(base + paths[i%len(paths)])
		if err != nil {
			fmt.Fprintln(os.Stderr, "workshop:", err)
			return
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		reqs.Add(1)
	}
}

func main() {
	dur := flag.Duration("d", 3*time.Second, "how long to drive load")
	conc := flag.Int("c", 4, "concurrent clients")
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	flag.Parse()

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "workshop:", err)
		os.Exit(1)
	}
	go worker()
	srv := &http.Server{Handler: routes()}
	go srv.Serve(ln)
	base := "http://" + ln.Addr().String()
	fmt.Printf("workshop: serving %s for %v with %d clients\n", base, *dur, *conc)

	var reqs atomic.Int64
	var wg sync.WaitGroup
	until := time.Now().Add(*dur)
	for i := 0; i < *conc; i++ {
		wg.Add(1)
		go client(base, until, &reqs, &wg)
	}
	wg.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	srv.Shutdown(ctx)
	fmt.Printf("workshop: %d requests, %d goroutines spawned, counter %d\n",
		reqs.Load(), spawned.Load(), counter)
}
