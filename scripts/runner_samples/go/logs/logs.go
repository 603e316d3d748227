package logs

import "fmt"

func Report() string { return fmt.Sprintf("FAIL\t%s", "example.com/fake 0.01s") }
