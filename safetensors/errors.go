package safetensors

// UsageError is the value the package panics with when it is called in a
// way that cannot be right (a programmer's error, not a file's): Op names
// the function and Msg what was expected.
type UsageError struct {
	Op, Msg string
}

func (e *UsageError) Error() string { return "safetensors: " + e.Op + ": " + e.Msg }
