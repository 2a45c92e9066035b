// Package lambdaruntime is a minimal Lambda Runtime API (the HTTP interface a custom runtime's bootstrap polls),
// so the router's real binary can be run as Lambda runs it. No emulator of it exists to use instead.
package lambdaruntime

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

const base = "/2018-06-01/runtime/"

// Runtime serves the API on loopback; AWS_LAMBDA_RUNTIME_API=Addr points a bootstrap at it.
type Runtime struct {
	Addr string
	srv  *httptest.Server

	next    chan invocation
	mu      sync.Mutex
	waiting map[string]chan result
	seq     atomic.Int64
}

type invocation struct {
	id      string
	payload []byte
}

type result struct {
	body []byte
	err  error
}

// Start serves the API until Close.
func Start() *Runtime {
	r := &Runtime{next: make(chan invocation), waiting: map[string]chan result{}}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	r.Addr = strings.TrimPrefix(r.srv.URL, "http://")
	return r
}

// Close stops serving.
func (r *Runtime) Close() { r.srv.Close() }

// Invoke hands payload to the function's next poll and returns its response, or the error it reported.
func (r *Runtime) Invoke(ctx context.Context, payload []byte) ([]byte, error) {
	id := fmt.Sprintf("req-%d", r.seq.Add(1))
	done := make(chan result, 1)
	r.mu.Lock()
	r.waiting[id] = done
	r.mu.Unlock()
	select {
	case r.next <- invocation{id: id, payload: payload}:
	case <-ctx.Done():
		return nil, fmt.Errorf("no bootstrap polled for invocation %s: %w", id, ctx.Err())
	}
	select {
	case res := <-done:
		return res.body, res.err
	case <-ctx.Done():
		return nil, fmt.Errorf("invocation %s: %w", id, ctx.Err())
	}
}

func (r *Runtime) serve(w http.ResponseWriter, req *http.Request) {
	path := strings.TrimPrefix(req.URL.Path, base)
	switch {
	case req.Method == http.MethodGet && path == "invocation/next":
		select {
		case inv := <-r.next:
			h := w.Header()
			h.Set("Lambda-Runtime-Aws-Request-Id", inv.id)
			h.Set("Lambda-Runtime-Deadline-Ms", strconv.FormatInt(time.Now().Add(time.Minute).UnixMilli(), 10))
			h.Set("Lambda-Runtime-Invoked-Function-Arn", "arn:aws:lambda:us-east-1:123456789012:function:kib-router")
			h.Set("Lambda-Runtime-Trace-Id", "Root=1-00000000-000000000000000000000000;Sampled=0")
			h.Set("Content-Type", "application/json")
			_, _ = w.Write(inv.payload)
		case <-req.Context().Done():
		}
	case req.Method == http.MethodPost && path == "init/error":
		w.WriteHeader(http.StatusAccepted) // acknowledged; the tests read start-up errors from stderr
	case req.Method == http.MethodPost && strings.HasPrefix(path, "invocation/"):
		parts := strings.Split(path, "/") // invocation/{id}/response|error
		if len(parts) != 3 || (parts[2] != "response" && parts[2] != "error") {
			http.NotFound(w, req)
			return
		}
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		done, ok := r.waiting[parts[1]]
		delete(r.waiting, parts[1])
		r.mu.Unlock()
		if !ok {
			http.Error(w, "unknown request id", http.StatusBadRequest)
			return
		}
		if parts[2] == "error" {
			done <- result{err: errors.New(string(body))}
		} else {
			done <- result{body: body}
		}
		w.WriteHeader(http.StatusAccepted)
	default:
		http.NotFound(w, req)
	}
}
