//go:build go1.23

// Range-over-func (Go 1.23+): the loop body becomes a closure main.rangeDemo-range1
// called by the iterator's func; the stack at leafR goes through both.
package main

func upTo(n int) func(func(int) bool) {
	return func(yield func(int) bool) {
		for i := 0; i < n; i++ {
			if !yield(i) {
				return
			}
		}
	}
}

//go:noinline
func leafR(v int) {
	stackOf("r")
}

//go:noinline
func rangeDemo() {
	for v := range upTo(3) {
		if v == 1 {
			leafR(v)
		}
	}
}

func init() { extras = append(extras, rangeDemo) }
