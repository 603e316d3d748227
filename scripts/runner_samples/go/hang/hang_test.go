package hang

import (
	"testing"
	"time"
)

func TestQuick(t *testing.T) {}

func TestWaitsForever(t *testing.T) {
	time.Sleep(10 * time.Minute)
}
