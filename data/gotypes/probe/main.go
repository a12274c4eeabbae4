// The program gotrace's Go type data is read from (scripts/gen-gotypes.py): built with
// DWARF by each Go release, it links the runtime and the standard-library code that
// data/gotypes/funcs.txt names. It is built, never run for the data; run, it serves one
// request to itself and exits.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sync"
	"time"
)

func main() {
	var mu sync.Mutex
	var wg sync.WaitGroup
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		json.NewEncoder(w).Encode(map[string]string{"path": r.URL.Path})
	})}
	go srv.Serve(ln)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", "http://"+ln.Addr().String()+"/x", nil)
	wg.Add(1)
	go func() {
		defer wg.Done()
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			io.Copy(os.Stdout, resp.Body)
			resp.Body.Close()
		}
	}()
	wg.Wait()
	ch := make(chan int, 1)
	select {
	case ch <- 1:
	case <-time.After(time.Millisecond):
	}
	var v map[string]string
	json.Unmarshal([]byte(`{"a":"b"}`), &v)
	f, err := os.CreateTemp("", "probe")
	if err == nil {
		f.Write([]byte("x"))
		f.Close()
		os.Remove(f.Name())
	}
	srv.Shutdown(ctx)
	defer func() { recover() }()
	panic(fmt.Sprint(<-ch, len(v)))
}
