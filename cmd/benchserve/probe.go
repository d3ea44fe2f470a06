package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"time"
)

// probeResult is what the prefill probe measured.
type probeResult struct {
	Streams      int     `json:"streams"`
	PromptTokens int     `json:"prompt_tokens"`
	TTFT         float64 `json:"long_prompt_ttft_ms"`
	GapP50Before float64 `json:"gap_p50_before_ms"`
	GapMaxBefore float64 `json:"gap_max_before_ms"`
	GapMaxDuring float64 `json:"gap_max_during_ms"`
	GapP50During float64 `json:"gap_p50_during_ms"`
	GapP90During float64 `json:"gap_p90_during_ms"`
	GapP50After  float64 `json:"gap_p50_after_ms"`
	Errors       int     `json:"errors"`
	FirstError   string  `json:"first_error,omitempty"`
}

// probe runs c.clients streams; once every one has streamed 20 chunks (or
// after 5 s) it sends one request with a c.probePromptTokens-token
// prompt, and compares the streams' gaps before it with their largest
// gaps between its start and its first token (p50, p90 and the largest:
// on a shared machine the largest is often another process's doing).
func probe(c config, stdout io.Writer) error {
	// a chunk per token: a token that ends inside a character (a random
	// model draws many) would otherwise send nothing until the next one,
	// a gap of two steps that no prefill caused
	c.everyToken = true
	client := newClient(c.clients + 1)
	prompt := promptJSON(c.prompt, c.promptTokens)
	var mu sync.Mutex
	streams := make([]stream, c.clients)
	counts := make([]int, c.clients)
	ready := make(chan struct{})
	var once sync.Once
	var wg sync.WaitGroup
	for i := range streams {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := doStream(context.Background(), client, c, prompt, c.maxTok, c.seed+int64(i), 0, func(time.Time) {
				mu.Lock()
				counts[i]++
				all := true
				for _, n := range counts {
					all = all && n >= 20
				}
				mu.Unlock()
				if all {
					once.Do(func() { close(ready) })
				}
			})
			streams[i] = s
		}()
	}
	select {
	case <-ready:
	case <-time.After(5 * time.Second):
	}
	long := doStream(context.Background(), client, c, promptJSON("", c.probePromptTokens), 1, c.seed+int64(c.clients), 0, nil)
	wg.Wait()
	r := probeResult{Streams: c.clients, PromptTokens: c.probePromptTokens}
	for _, s := range append(streams, long) {
		if s.err != nil {
			r.Errors++
			if r.FirstError == "" {
				r.FirstError = s.err.Error()
			}
		}
	}
	if long.err != nil || len(long.chunks) == 0 {
		if long.err == nil {
			r.FirstError = "the long prompt's request streamed no text"
		}
		return fmt.Errorf("prefill probe: %s", r.FirstError)
	}
	t0, t1 := long.start, long.chunks[0]
	r.TTFT = ms(t1.Sub(t0))
	var before, during, after []float64
	for _, s := range streams {
		for k := 1; k < len(s.chunks); k++ {
			a, b := s.chunks[k-1], s.chunks[k]
			g := ms(b.Sub(a))
			switch {
			case b.Before(t0):
				before = append(before, g)
			case a.After(t1):
				after = append(after, g)
			default: // the gap overlaps the prefill
				during = append(during, g)
			}
		}
	}
	r.GapP50Before, r.GapMaxBefore = percentile(before, 50), maxOf(before)
	r.GapMaxDuring, r.GapP50After = maxOf(during), percentile(after, 50)
	r.GapP50During, r.GapP90During = percentile(during, 50), percentile(during, 90)
	if c.jsonOut {
		return json.NewEncoder(stdout).Encode(r)
	}
	fmt.Fprintf(stdout, "prefill probe: %d streams, a %d-token prompt: its TTFT %.1f ms; streams' gaps before p50 %.2f ms max %.2f ms; gaps during the prefill p50 %.2f ms p90 %.2f ms max %.2f ms; p50 after %.2f ms; errors %d\n",
		r.Streams, r.PromptTokens, r.TTFT, r.GapP50Before, r.GapMaxBefore, r.GapP50During, r.GapP90During, r.GapMaxDuring, r.GapP50After, r.Errors)
	return nil
}
