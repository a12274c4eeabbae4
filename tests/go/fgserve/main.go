// fgserve: a live HTTP server for call-graph mode cut mid-request. It listens on
// 127.0.0.1 (a free port), prints "port=N" and serves /work?steps=N&id=ID:
// main.serveWork calls main.step N times, each sleeping 20 ms, printing "id=ID step=I"
// as step I begins, then answers "done N". A tracer cut while a request runs has the
// request's tree open; the lines say how far the request has got.
package main

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"time"
)

//go:noinline
func step(i int) int {
	time.Sleep(20 * time.Millisecond)
	return i + 1
}

//go:noinline
func serveWork(w http.ResponseWriter, r *http.Request) {
	n, _ := strconv.Atoi(r.URL.Query().Get("steps"))
	id := r.URL.Query().Get("id")
	s := 0
	for i := 0; i < n; i++ {
		fmt.Printf("id=%s step=%d\n", id, i)
		s = step(s)
	}
	fmt.Fprintf(w, "done %d\n", s)
}

func main() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("port=%d\n", ln.Addr().(*net.TCPAddr).Port)
	http.HandleFunc("/work", serveWork)
	http.Serve(ln, nil)
}
