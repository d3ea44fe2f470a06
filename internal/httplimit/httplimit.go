// Package httplimit bounds what an HTTP server accepts, so that no client
// — one that sends a huge body, sends it a byte a second, never reads its
// answer, or comes with a thousand others — can exhaust the server's
// memory, connections or goroutines: a body limit, a bound on requests in
// flight and queued, read, write and idle timeouts, and panics answered
// with status 500 and one log line instead of a dropped connection.
//
//	lim := httplimit.Default()
//	srv := lim.Server(handler, log.New(os.Stderr, "serve: ", 0))
//	srv.Serve(listener)
package httplimit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"net/http"
	"strings"
	"sync/atomic"
	"time"
)

// Limits are the bounds of a server. A zero size or timeout means no
// bound; MaxInFlight below 1 counts as 1, and MaxQueued 0 means no queue.
type Limits struct {
	// MaxBodyBytes bounds a request's body: reading past it fails (with
	// *http.MaxBytesError) and the request is answered 413.
	MaxBodyBytes int64
	// MaxHeaderBytes bounds the request line (with its query) and headers.
	MaxHeaderBytes int
	// MaxInFlight requests are handled at once; the others wait in a queue
	// of at most MaxQueued, for at most QueueTimeout. A request that finds
	// the queue full is answered 429 Too Many Requests, one that waited
	// QueueTimeout 503 Service Unavailable, both with Retry-After.
	MaxInFlight  int
	MaxQueued    int
	QueueTimeout time.Duration
	// The http.Server timeouts: reading the headers, reading the whole
	// request, writing the response (from the end of the headers), and
	// keeping an idle keep-alive connection. A client that sends slowly
	// or never reads its answer is cut off by them.
	ReadHeaderTimeout time.Duration
	ReadTimeout       time.Duration
	WriteTimeout      time.Duration
	IdleTimeout       time.Duration
}

// Default returns limits for a model server: 1 MiB bodies, 64 KiB
// headers, 4 requests in flight and 64 queued (for up to 30 s), 10 s to
// send the headers, 30 s the whole request, 5 minutes to write the
// answer, 2 minutes idle.
func Default() Limits {
	return Limits{
		MaxBodyBytes: 1 << 20, MaxHeaderBytes: 64 << 10,
		MaxInFlight: 4, MaxQueued: 64, QueueTimeout: 30 * time.Second,
		ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second,
		WriteTimeout: 5 * time.Minute, IdleTimeout: 2 * time.Minute,
	}
}

// Server returns an http.Server with l's timeouts and header limit that
// serves h through l.Handler. Its ErrorLog is logger too.
func (l Limits) Server(h http.Handler, logger *log.Logger) *http.Server {
	return &http.Server{
		Handler:           l.Handler(h, logger),
		MaxHeaderBytes:    l.MaxHeaderBytes,
		ReadHeaderTimeout: l.ReadHeaderTimeout,
		ReadTimeout:       l.ReadTimeout,
		WriteTimeout:      l.WriteTimeout,
		IdleTimeout:       l.IdleTimeout,
		ErrorLog:          logger,
	}
}

// TimeoutServer returns an http.Server with l's timeouts and header limit
// that serves h as it is, for a handler that bounds its bodies and
// requests in flight and recovers its panics itself (serve.Handler); its
// ErrorLog is logger. A handler that streams a long answer extends the
// write deadline before each write (http.ResponseController).
func (l Limits) TimeoutServer(h http.Handler, logger *log.Logger) *http.Server {
	return &http.Server{
		Handler:           h,
		MaxHeaderBytes:    l.MaxHeaderBytes,
		ReadHeaderTimeout: l.ReadHeaderTimeout,
		ReadTimeout:       l.ReadTimeout,
		WriteTimeout:      l.WriteTimeout,
		IdleTimeout:       l.IdleTimeout,
		ErrorLog:          logger,
	}
}

// Handler returns h behind l's admission control and body limit, with
// every panic of h recovered: answered 500 with a JSON error (when no
// answer was started) and logged on one line of logger (nil: the standard
// logger). A request's context is done at WriteTimeout, when its answer
// could no longer be written, so that a handler that watches it stops.
func (l Limits) Handler(h http.Handler, logger *log.Logger) http.Handler {
	if logger == nil {
		logger = log.Default()
	}
	inFlight := max(l.MaxInFlight, 1)
	a := &admission{slots: make(chan struct{}, inFlight), maxQueued: int64(max(l.MaxQueued, 0)), wait: l.QueueTimeout}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rw := &recorder{ResponseWriter: w}
		defer func() {
			p := recover()
			if p == nil {
				return
			}
			if p == http.ErrAbortHandler {
				panic(p)
			}
			logger.Printf("panic serving %s %s: %s", r.Method, r.URL.Path, oneLine(fmt.Sprint(p)))
			if !rw.wrote {
				Error(rw, http.StatusInternalServerError, "internal error: "+oneLine(fmt.Sprint(p)))
			}
		}()
		if l.WriteTimeout > 0 {
			// done a little before the write deadline, so that the
			// answer saying so can still be written
			ctx, cancel := context.WithTimeout(r.Context(), l.WriteTimeout-min(l.WriteTimeout/10, time.Second))
			defer cancel()
			r = r.WithContext(ctx)
		}
		release, code := a.admit(r.Context())
		if code != 0 {
			rw.Header().Set("Retry-After", "1")
			msg := "too many requests: the queue is full; retry later"
			if code == http.StatusServiceUnavailable {
				msg = "the server is busy: no slot within the queue timeout; retry later"
			}
			Error(rw, code, msg)
			return
		}
		defer release()
		if l.MaxBodyBytes > 0 && r.Body != nil {
			r.Body = http.MaxBytesReader(rw, r.Body, l.MaxBodyBytes)
		}
		h.ServeHTTP(rw, r)
	})
}

// DoneReading clears the read deadline of w's connection: call it once a
// handler has read the request's body, before a long computation. The
// http.Server keeps ReadTimeout, meant for clients that send slowly, as
// the connection's read deadline while the handler runs, and cancels the
// request's context when it passes.
func DoneReading(w http.ResponseWriter) {
	http.NewResponseController(w).SetReadDeadline(time.Time{})
}

// admission hands out the slots of requests in flight.
type admission struct {
	slots     chan struct{}
	queued    atomic.Int64
	maxQueued int64
	wait      time.Duration
}

// admit waits for a slot and returns its release, or a status: 429 when
// the queue is full, 503 after the queue timeout or when the client left.
func (a *admission) admit(ctx context.Context) (release func(), status int) {
	release = func() { <-a.slots }
	select {
	case a.slots <- struct{}{}:
		return release, 0
	default:
	}
	if a.queued.Add(1) > a.maxQueued {
		a.queued.Add(-1)
		return nil, http.StatusTooManyRequests
	}
	defer a.queued.Add(-1)
	var timeout <-chan time.Time
	if a.wait > 0 {
		t := time.NewTimer(a.wait)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case a.slots <- struct{}{}:
		return release, 0
	case <-timeout:
	case <-ctx.Done():
	}
	return nil, http.StatusServiceUnavailable
}

// recorder notes whether an answer was started.
type recorder struct {
	http.ResponseWriter
	wrote bool
}

func (r *recorder) WriteHeader(code int) {
	r.wrote = true
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	r.wrote = true
	return r.ResponseWriter.Write(b)
}

// Flush passes a streaming handler's flushes on.
func (r *recorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		r.wrote = true
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// Error answers code with the JSON body {"error": msg}.
func Error(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(map[string]string{"error": msg})
}

// BodyError returns the status and message for an error met reading a
// request's body: 413 past MaxBodyBytes, 408 when the client sent too
// slowly, else 400.
func BodyError(err error) (int, string) {
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		return http.StatusRequestEntityTooLarge, fmt.Sprintf("the request body is larger than %d bytes", mbe.Limit)
	case errors.Is(err, context.DeadlineExceeded) || isTimeout(err):
		return http.StatusRequestTimeout, "the request body came too slowly"
	}
	return http.StatusBadRequest, "reading the request body: " + err.Error()
}

func isTimeout(err error) bool {
	var t interface{ Timeout() bool }
	return errors.As(err, &t) && t.Timeout()
}

// oneLine joins the lines of s with "; ".
func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(strings.TrimSpace(s), "\n", " ; ")), " ")
}
