package dist

import "os"

// single is the transport of a world of one process: every collective
// leaves the data as it is.
type single struct{}

func (single) allReduceSum([]float32) error         { return nil }
func (single) broadcast([]float32, int) error       { return nil }
func (single) broadcastBytes([]byte, int) error     { return nil }
func (single) allGather(b []byte) ([][]byte, error) { return [][]byte{append([]byte(nil), b...)}, nil }
func (single) barrier() error                       { return nil }
func (single) finalize() error                      { return nil }
func (single) abort(code int)                       { os.Exit(code) }

// newSingle returns the Comm of a one-process world.
func newSingle() *Comm { return &Comm{tr: single{}, size: 1, backend: "single process"} }
