package nn

// SetFusedSplitFlops sets the fused step's fusedSplitFlops for a test and
// returns the function that restores it.
func SetFusedSplitFlops(v float64) (restore func()) {
	saved := fusedSplitFlops
	fusedSplitFlops = v
	return func() { fusedSplitFlops = saved }
}
