package logs

import (
	"fmt"
	"testing"
)

func TestReport(t *testing.T) {
	fmt.Println("error: simulated failure output printed by a passing test")
	fmt.Println(Report())
	if Report() == "" {
		t.Fatal("empty")
	}
}
