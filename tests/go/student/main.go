// student: (*Student).String on students whose names are built at run time.
package main

import (
	"fmt"
	"os"
	"strings"
)

type Student struct {
	name string
	age  int64
}

//go:noinline
func (s *Student) String() string { return fmt.Sprintf("%s/%d", s.name, s.age) }

func main() {
	names := []string{"alice", "bob", "carol"}
	out := []string{}
	for i, n := range names {
		// Built at run time: the bytes after the name are not another literal.
		s := &Student{name: strings.ToUpper(n[:1]) + n[1:], age: int64(20 + i)}
		out = append(out, s.String())
	}
	fmt.Fprintln(os.Stderr, strings.Join(out, " "))
}
