package calc

import (
	"os"
	"testing"
)

// Each call's arguments are logged ("Add 1 10"): the oracle of a tracer's args.
func TestAdd(t *testing.T) {
	for i := 1; i <= 3; i++ {
		if got := Add(i, 10*i); got != 11*i {
			t.Fatalf("Add(%d, %d) = %d", i, 10*i, got)
		}
		t.Logf("Add %d %d", i, 10*i)
	}
}

// CALC_FAIL=1: the package's tests fail (the go command then exits 1).
func TestFailOnRequest(t *testing.T) {
	if os.Getenv("CALC_FAIL") != "" {
		t.Fatal("asked to fail")
	}
}
