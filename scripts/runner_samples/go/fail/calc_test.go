package fail

import "testing"

func TestAdd(t *testing.T) {
	if got := Add(2, 3); got != 5 {
		t.Errorf("Add(2, 3) = %d, want 5", got)
	}
}

func TestZero(t *testing.T) {
	if Add(1, 0) != 1 {
		t.Fatal("zero")
	}
}
