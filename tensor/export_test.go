package tensor

// AutocastCopies returns the storages of the rounded parameter copies
// that the calling goroutine's autocast region holds (nil for a
// parameter marked but not rounded yet), nil outside a region: for the
// tests outside the package (autocast_cuda_test.go).
func AutocastCopies() []Storage {
	r := currentAutocast()
	if r == nil {
		return nil
	}
	var out []Storage
	for _, c := range r.cache {
		out = append(out, c)
	}
	return out
}
