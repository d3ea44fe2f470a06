package main

import (
	"fmt"
	"strings"

	"github.com/wickml/wick/serve"
)

// newEngine starts the engine that runs m for the server.
func newEngine(m *model, o *options) (*serve.Engine, error) {
	eng, err := serve.NewEngine(serve.Config{
		Model: m.lm, MaxBatch: o.maxBatch, KVCacheBytes: int64(o.kvMemory), BlockSize: o.kvBlock,
		MaxWaiting: o.maxWaiting, PrefillChunk: o.prefillChunk,
	})
	if err != nil {
		return nil, fmt.Errorf("starting the engine: %s", strings.TrimPrefix(err.Error(), "serve: "))
	}
	return eng, nil
}
