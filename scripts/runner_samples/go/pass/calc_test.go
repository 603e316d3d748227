package pass

import "testing"

func TestAdd(t *testing.T) {
	if Add(2, 3) != 5 {
		t.Fatal("wrong")
	}
}

func TestAddReportsFailure(t *testing.T) {
	t.Log("--- FAIL: this is only a log line")
	if Add(0, 0) != 0 {
		t.Fatal("wrong")
	}
}

func TestSkipped(t *testing.T) {
	t.Skip("not on this platform")
}
