package cuda

// deviceRequests makes every device request of the package's API on GPU
// indices that a binary without a usable GPU cannot serve (the stub, or a
// GPU build whose driver found no GPU) and returns their errors by name.
func deviceRequests() map[string]error {
	errs := map[string]error{}
	_, errs["Open"] = Open(0)
	_, errs["Memory"] = Memory(1)
	_, errs["DeviceName"] = DeviceName(0)
	errs["EmptyCache"] = EmptyCache(0)
	errs["Synchronize"] = Synchronize(0)
	errs["ResetPeak"] = ResetPeak(0)
	_, errs["BLASLibrary"] = BLASLibrary(0)
	return errs
}
