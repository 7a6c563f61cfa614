package main

import (
	"errors"
	"log"
	"net/http"

	"github.com/panjf2000/ants/v2"

	"corobench/targets/go-common/contract"
	"corobench/targets/go-common/httpserve"
)

// pooledHandler runs each request's handler on an ants worker. net/http's
// connection goroutine only reads the request, submits the work and
// waits for it to finish, so at most pool_size requests are handled at
// once, whatever the number of connections.
type pooledHandler struct {
	pool     *ants.Pool
	settings poolSettings
	name     string
	inner    http.Handler
}

func (h *pooledHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	done := make(chan struct{})
	err := h.pool.Submit(func() {
		defer close(done)
		defer h.recoverInto(w)
		h.inner.ServeHTTP(w, r)
	})
	if err != nil {
		httpserve.Write(w, h.name, h.refusal(err))
		return
	}
	<-done
}

// recoverInto keeps a panicking handler from killing the worker silently
// and from leaving its client without an answer.
func (h *pooledHandler) recoverInto(w http.ResponseWriter) {
	if failure := recover(); failure != nil {
		log.Printf("%s: handler panicked: %v", h.name, failure)
		httpserve.Write(w, h.name, contract.Error(http.StatusInternalServerError, "handler failed: %v", failure))
	}
}

// refusal is the 503 for work the pool would not take.
func (h *pooledHandler) refusal(err error) contract.Response {
	switch {
	case errors.Is(err, ants.ErrPoolOverload) && h.settings.nonblocking:
		return contract.Error(http.StatusServiceUnavailable,
			"worker pool overloaded: all %d workers (pool_size) are busy and nonblocking is true",
			h.settings.size)
	case errors.Is(err, ants.ErrPoolOverload):
		return contract.Error(http.StatusServiceUnavailable,
			"worker pool overloaded: all %d workers (pool_size) are busy and %d requests (queue_length) already wait",
			h.settings.size, h.settings.queueLength)
	case errors.Is(err, ants.ErrPoolClosed):
		return contract.Error(http.StatusServiceUnavailable, "the server is stopping")
	default:
		return contract.Error(http.StatusServiceUnavailable, "worker pool refused the request: %v", err)
	}
}
