package serve

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// metrics are the Handler's counters for /metrics.
type metrics struct {
	mu       sync.Mutex
	requests map[[2]string]uint64 // endpoint, status

	promptTokens     atomic.Uint64
	completionTokens atomic.Uint64

	ttftMu     sync.Mutex
	ttftCounts []uint64 // per ttftBuckets, not cumulative; the last is +Inf
	ttftSum    float64
}

// ttftBuckets are the upper bounds (seconds) of the time-to-first-token
// histogram.
var ttftBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}

// batchBuckets are the upper bounds of the batch-size histogram.
var batchBuckets = []int{1, 2, 4, 8, 16, 32, 64, 128, 256}

func newMetrics() *metrics {
	return &metrics{requests: map[[2]string]uint64{}, ttftCounts: make([]uint64, len(ttftBuckets)+1)}
}

func (m *metrics) request(endpoint string, status int) {
	m.mu.Lock()
	m.requests[[2]string{endpoint, fmt.Sprint(status)}]++
	m.mu.Unlock()
}

func (m *metrics) observeTTFT(d time.Duration) {
	s := d.Seconds()
	i := sort.SearchFloat64s(ttftBuckets, s) // the first bound ≥ s
	m.ttftMu.Lock()
	m.ttftCounts[i]++
	m.ttftSum += s
	m.ttftMu.Unlock()
}

// serveMetrics serves GET /metrics in Prometheus' text exposition format
// (version 0.0.4):
//
//	wick_requests_total{endpoint,status}      counter
//	wick_prompt_tokens_total                  counter (tokens of the prompts served)
//	wick_completion_tokens_total              counter (tokens generated for clients)
//	wick_requests_in_flight                   gauge (HTTP generation requests)
//	wick_running_sequences                    gauge (the engine's running batch)
//	wick_waiting_sequences                    gauge (the engine's queue)
//	wick_kv_blocks_used, wick_kv_blocks_total gauge
//	wick_engine_steps_total                   counter
//	wick_batch_size                           histogram (sequences per engine step)
//	wick_time_to_first_token_seconds          histogram
//	go_goroutines                             gauge (the process's goroutines)
//	process_resident_memory_bytes             gauge (Linux: /proc/self/statm)
func (h *Handler) serveMetrics(w http.ResponseWriter, r *http.Request) {
	var b strings.Builder
	h.metrics.write(&b, h.g.Stats(), h.inFlight.Load())
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	io.WriteString(w, b.String())
}

func (m *metrics) write(b *strings.Builder, st Stats, inFlight int64) {
	metric := func(name, typ, help string) {
		fmt.Fprintf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, typ)
	}
	metric("wick_requests_total", "counter", "HTTP requests answered, by endpoint and status.")
	m.mu.Lock()
	keys := make([][2]string, 0, len(m.requests))
	for k := range m.requests {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i][0] != keys[j][0] {
			return keys[i][0] < keys[j][0]
		}
		return keys[i][1] < keys[j][1]
	})
	for _, k := range keys {
		fmt.Fprintf(b, "wick_requests_total{endpoint=%q,status=%q} %d\n", k[0], k[1], m.requests[k])
	}
	m.mu.Unlock()
	metric("wick_prompt_tokens_total", "counter", "Prompt tokens of the requests served.")
	fmt.Fprintf(b, "wick_prompt_tokens_total %d\n", m.promptTokens.Load())
	metric("wick_completion_tokens_total", "counter", "Tokens generated for the requests served.")
	fmt.Fprintf(b, "wick_completion_tokens_total %d\n", m.completionTokens.Load())
	metric("wick_requests_in_flight", "gauge", "Generation requests being handled.")
	fmt.Fprintf(b, "wick_requests_in_flight %d\n", inFlight)
	metric("wick_running_sequences", "gauge", "Sequences in the engine's running batch.")
	fmt.Fprintf(b, "wick_running_sequences %d\n", st.Running)
	metric("wick_waiting_sequences", "gauge", "Requests waiting in the engine's queue.")
	fmt.Fprintf(b, "wick_waiting_sequences %d\n", st.Waiting)
	metric("wick_kv_blocks_used", "gauge", "KV-cache blocks holding positions.")
	fmt.Fprintf(b, "wick_kv_blocks_used %d\n", st.BlocksUsed)
	metric("wick_kv_blocks_total", "gauge", "KV-cache blocks in the memory budget.")
	fmt.Fprintf(b, "wick_kv_blocks_total %d\n", st.BlocksTotal)
	metric("wick_engine_prompt_tokens_total", "counter", "Prompt tokens the engine prefilled.")
	fmt.Fprintf(b, "wick_engine_prompt_tokens_total %d\n", st.PromptTokens)
	metric("wick_engine_generated_tokens_total", "counter", "Tokens the engine generated.")
	fmt.Fprintf(b, "wick_engine_generated_tokens_total %d\n", st.GeneratedTokens)
	metric("wick_engine_steps_total", "counter", "Engine steps (one batched forward each).")
	fmt.Fprintf(b, "wick_engine_steps_total %d\n", st.Steps)

	metric("wick_batch_size", "histogram", "Sequences per engine step.")
	var cum, sum uint64
	next := 0
	for _, bound := range batchBuckets {
		for ; next < len(st.BatchSizes) && next <= bound; next++ {
			cum += st.BatchSizes[next]
			sum += uint64(next) * st.BatchSizes[next]
		}
		fmt.Fprintf(b, "wick_batch_size_bucket{le=\"%d\"} %d\n", bound, cum)
	}
	for ; next < len(st.BatchSizes); next++ {
		cum += st.BatchSizes[next]
		sum += uint64(next) * st.BatchSizes[next]
	}
	fmt.Fprintf(b, "wick_batch_size_bucket{le=\"+Inf\"} %d\nwick_batch_size_sum %d\nwick_batch_size_count %d\n", cum, sum, cum)

	metric("wick_time_to_first_token_seconds", "histogram", "Time from a request's arrival to its first token.")
	m.ttftMu.Lock()
	cum = 0
	for i, bound := range ttftBuckets {
		cum += m.ttftCounts[i]
		fmt.Fprintf(b, "wick_time_to_first_token_seconds_bucket{le=\"%g\"} %d\n", bound, cum)
	}
	cum += m.ttftCounts[len(ttftBuckets)]
	fmt.Fprintf(b, "wick_time_to_first_token_seconds_bucket{le=\"+Inf\"} %d\nwick_time_to_first_token_seconds_sum %g\nwick_time_to_first_token_seconds_count %d\n", cum, m.ttftSum, cum)
	m.ttftMu.Unlock()

	metric("go_goroutines", "gauge", "Goroutines in the process.")
	fmt.Fprintf(b, "go_goroutines %d\n", runtime.NumGoroutine())
	if rss, ok := residentBytes(); ok {
		metric("process_resident_memory_bytes", "gauge", "Resident memory of the process in bytes.")
		fmt.Fprintf(b, "process_resident_memory_bytes %d\n", rss)
	}
}

// residentBytes returns the process's resident memory from
// /proc/self/statm (its second field, in pages), where there is one.
func residentBytes() (int64, bool) {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0, false
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0, false
	}
	pages, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		return 0, false
	}
	return pages * int64(os.Getpagesize()), true
}
