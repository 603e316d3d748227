package builderr

func Add(a, b int) int { return a + b + "x" }
