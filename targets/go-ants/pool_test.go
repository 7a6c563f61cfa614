package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync"
	"testing"
	"time"
)

// gate is a handler that holds every request until released, so a test
// can fill the pool without relying on timing.
type gate struct {
	entered chan struct{}
	release chan struct{}
}

func newGate() *gate {
	return &gate{entered: make(chan struct{}, 16), release: make(chan struct{})}
}

func (g *gate) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	g.entered <- struct{}{}
	<-g.release
	_, _ = io.WriteString(w, "done")
}

func startPooled(t *testing.T, settings poolSettings, inner http.Handler) (*httptest.Server, *pooledHandler) {
	t.Helper()
	pool, err := settings.newPool()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Release)
	handler := &pooledHandler{pool: pool, settings: settings, name: "go-ants-test", inner: inner}
	server := httptest.NewServer(handler)
	t.Cleanup(server.Close)
	return server, handler
}

func get(t *testing.T, url string) (int, string, string) {
	t.Helper()
	response, err := http.Get(url)
	if err != nil {
		t.Error(err)
		return 0, "", ""
	}
	defer response.Body.Close()
	body, _ := io.ReadAll(response.Body)
	return response.StatusCode, response.Header.Get("Server"), string(body)
}

func TestNonblockingPoolRefusesWhenEveryWorkerIsBusy(t *testing.T) {
	inner := newGate()
	server, _ := startPooled(t, poolSettings{size: 1, queueLength: 1, nonblocking: true}, inner)
	var first sync.WaitGroup
	first.Go(func() { get(t, server.URL) })
	<-inner.entered

	status, serverName, body := get(t, server.URL)
	want := `{"error":"worker pool overloaded: all 1 workers (pool_size) are busy and nonblocking is true"}`
	if status != http.StatusServiceUnavailable || serverName != "go-ants-test" || body != want {
		t.Errorf("second request = %d %q %s; want 503 go-ants-test %s", status, serverName, body, want)
	}
	close(inner.release)
	first.Wait()
}

func TestBlockingPoolQueuesUpToQueueLengthThenRefuses(t *testing.T) {
	inner := newGate()
	server, handler := startPooled(t, poolSettings{size: 1, queueLength: 1}, inner)
	var admitted sync.WaitGroup
	statuses := make(chan int, 2)
	for range 2 {
		admitted.Go(func() {
			status, _, _ := get(t, server.URL)
			statuses <- status
		})
	}
	<-inner.entered // one request runs on the only worker...
	// ...and the other waits in Submit. The deadline only keeps a broken
	// pool from hanging the test; it is not a timing assertion.
	for deadline := time.Now().Add(30 * time.Second); handler.pool.Waiting() < 1; runtime.Gosched() {
		if time.Now().After(deadline) {
			t.Fatal("the second request never queued in the pool")
		}
	}

	status, _, body := get(t, server.URL)
	want := `{"error":"worker pool overloaded: all 1 workers (pool_size) are busy and 1 requests (queue_length) already wait"}`
	if status != http.StatusServiceUnavailable || body != want {
		t.Errorf("third request = %d %s; want 503 %s", status, body, want)
	}
	close(inner.release)
	admitted.Wait()
	close(statuses)
	for status := range statuses {
		if status != http.StatusOK {
			t.Errorf("a queued request got %d; want 200", status)
		}
	}
}

func TestLoadPoolSettingsRejectsBadValues(t *testing.T) {
	t.Setenv("NONBLOCKING", "yes")
	if _, err := loadPoolSettings(); err == nil || err.Error() != `NONBLOCKING must be one of false, true, got "yes"` {
		t.Errorf("error = %v", err)
	}
	t.Setenv("NONBLOCKING", "")
	t.Setenv("POOL_SIZE", "0")
	if _, err := loadPoolSettings(); err == nil || err.Error() != `POOL_SIZE must be an integer in 1..=1000000, got "0"` {
		t.Errorf("error = %v", err)
	}
}
