// errs: functions that return errors of every common make (errors.New, a sentinel,
// fmt.Errorf wrapping with %w, a custom error type) and nil, a value-receiver method
// (Note.String, which Go also inlines into the (*Note).String wrapper) and a generic
// function with two instances. The program prints what it returned and how often
// (the tests' oracle): "RESULT <n> <text>" for each call, "COUNT <text> <k>" at the end.
package main

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
)

var ErrNotFound = errors.New("not found")

type ParseError struct {
	Line int
	Msg  string
}

func (e *ParseError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }

//go:noinline
func Risky(n int) (v int, err error) {
	switch n % 5 {
	case 0:
		return n, nil
	case 1:
		return 0, errors.New("bad input " + strconv.Itoa(n%3))
	case 2:
		return 0, fmt.Errorf("lookup %d: %w", n%2, ErrNotFound)
	case 3:
		return 0, &ParseError{Line: n, Msg: "unexpected EOF"}
	}
	return 0, ErrNotFound
}

type Note struct {
	ID    int
	Title string
	Tags  []string
}

func (n Note) String() string { return fmt.Sprintf("%d:%s", n.ID, n.Title) }

//go:noinline
func SumOf[T int | int32](xs []T) T {
	var s T
	for _, x := range xs {
		s += x
	}
	return s
}

// Tag takes values of several dynamic types through an empty interface.
//
//go:noinline
func Tag(v any) int {
	if v == nil {
		return 0
	}
	return 1
}

//go:noinline
func Items(n int) []int {
	if n%2 == 0 {
		return nil
	}
	return make([]int, n%4)
}

//go:noinline
func Label(n int) string { return "label-" + strconv.Itoa(n) }

// keyOf is the text gotrace's @[rets.err] shows: the error's text for errors.New's and
// fmt.Errorf's, the dynamic type in parentheses for others (Error() is not run in BPF).
func keyOf(err error) string {
	var pe *ParseError
	if errors.As(err, &pe) && err == error(pe) {
		return "(*main.ParseError)"
	}
	return err.Error()
}

func main() {
	n := 10
	if len(os.Args) > 1 {
		n, _ = strconv.Atoi(os.Args[1])
	}
	counts := map[string]int{}
	nils, nonnil, nilItems := 0, 0, 0
	for i := 0; i < n; i++ {
		_, err := Risky(i)
		if err == nil {
			nils++
			fmt.Println("RESULT", i, "<nil>")
			continue
		}
		nonnil++
		counts[keyOf(err)]++
		fmt.Println("RESULT", i, err)
		if Items(i) == nil {
			nilItems++
			fmt.Println("ITEMS r0=<nil>")
		} else {
			fmt.Println("ITEMS r0=non-nil")
		}
		fmt.Println("LABEL r0=" + Label(i))
	}
	var stringers []fmt.Stringer
	for i := 0; i < 3; i++ {
		note := Note{ID: i, Title: "t" + strconv.Itoa(i), Tags: []string{"a", "b"}}
		type plain Note // %+v without Note's String method
		fmt.Printf("NOTE %+v\n", plain(note))
		_ = note.String()
		stringers = append(stringers, &note)
	}
	for _, s := range stringers {
		_ = s.String() // (*Note).String: Note.String inlined into the wrapper
	}
	// Note.String out of line: called through a func value the compiler cannot see
	// through
	calls := []func(Note) string{Note.String}
	for i := 0; i < 2; i++ {
		note := Note{ID: 10 + i, Title: "v" + strconv.Itoa(i), Tags: []string{"c"}}
		type plain Note
		fmt.Printf("VALUE %+v\n", plain(note))
		_ = calls[len(os.Args)%len(calls)](note)
	}
	tags := []any{7, "x", true, int32(-3), Note{ID: 9}, 7, nil, "x", 7}
	for _, v := range tags {
		Tag(v)
		k := fmt.Sprint(v) // as gotrace's key shows it: a struct by its type
		if _, ok := v.(Note); ok {
			k = "(main.Note)"
		}
		fmt.Printf("TAG %s\n", k)
	}
	ints, int32s := []int{1, 2, 3}, []int32{4, 5}
	fmt.Println("SUMLEN", len(ints), cap(ints))
	fmt.Println("SUMLEN", len(int32s), cap(int32s))
	fmt.Println("SUMS", SumOf(ints), SumOf(int32s))
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Printf("COUNT %s %d\n", k, counts[k])
	}
	fmt.Println("NILS", nils, "NONNIL", nonnil, "NILITEMS", nilItems)
}
