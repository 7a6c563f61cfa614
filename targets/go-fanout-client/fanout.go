package main

import (
	"context"
	"corobench/targets/go-common/benchline"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// result is what one fan-out measured.
type result struct {
	cfg config
	// requests were issued (one per goroutine); failed[kind] of them failed.
	requests int
	failed   [kindCount]int
	// firstError holds the first error of each kind, for the diagnostics.
	firstError [kindCount]error
	// fdExhausted: some connect failed for want of a file descriptor.
	fdExhausted bool
	// dials counts connections the Transport tried to open.
	dials int64
	// wall runs from the start barrier's release to the last goroutine's end.
	wall time.Duration
	// latency holds each successful request's time, in microseconds.
	latency      *hdrhistogram.Histogram
	meanMS       float64
	bytesPerReq  float64
	allocsPerReq float64
	fileLimit    uint64
}

// newTransport is the mode's http.Transport. Both modes ignore proxies
// from the environment; dials counts every connection attempt.
func newTransport(cfg config, dials *atomic.Int64) *http.Transport {
	dialer := &net.Dialer{KeepAlive: 30 * time.Second}
	return &http.Transport{
		DialContext: func(ctx context.Context, network, address string) (net.Conn, error) {
			dials.Add(1)
			return dialer.DialContext(ctx, network, address)
		},
		DisableKeepAlives:   cfg.mode == modeFresh,
		MaxIdleConns:        0, // no overall limit: MaxIdleConnsPerHost is the pool's bound
		MaxIdleConnsPerHost: cfg.maxIdlePerHost,
		MaxConnsPerHost:     cfg.maxConnsPerHost,
		IdleConnTimeout:     90 * time.Second,
	}
}

// get does one GET and reads the whole answer. Only a 200 whose body was
// read to the end is a success; the body is closed either way, so with
// keep-alive the connection goes back to the pool.
func get(client *http.Client, url string) error {
	response, err := client.Get(url)
	if err != nil {
		return err
	}
	_, err = io.Copy(io.Discard, response.Body)
	if closeErr := response.Body.Close(); err == nil {
		err = closeErr
	}
	if err == nil && response.StatusCode != http.StatusOK {
		err = &statusError{status: response.StatusCode}
	}
	return err
}

// run starts cfg.goroutines goroutines, releases them together and waits
// until each has done its one GET.
func run(cfg config) result {
	var dials atomic.Int64
	transport := newTransport(cfg, &dials)
	defer transport.CloseIdleConnections()
	client := &http.Client{Transport: transport, Timeout: cfg.timeout()}

	n := cfg.goroutines
	latencies := make([]time.Duration, n)
	failures := make([]error, n)
	var ready, finished sync.WaitGroup
	start := make(chan struct{})

	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for i := range n {
		ready.Add(1)
		finished.Add(1)
		go func() {
			defer finished.Done()
			ready.Done()
			<-start
			began := time.Now()
			failures[i] = get(client, cfg.url)
			latencies[i] = time.Since(began)
		}()
	}
	ready.Wait()
	began := time.Now()
	close(start)
	finished.Wait()
	wall := time.Since(began)
	runtime.ReadMemStats(&after)

	res := result{
		cfg:          cfg,
		requests:     n,
		dials:        dials.Load(),
		wall:         wall,
		latency:      hdrhistogram.New(1, int64(time.Hour/time.Microsecond), 3),
		bytesPerReq:  float64(after.TotalAlloc-before.TotalAlloc) / float64(n),
		allocsPerReq: float64(after.Mallocs-before.Mallocs) / float64(n),
	}
	var latencySum time.Duration
	for i, err := range failures {
		if kind := classify(err); kind != kindNone {
			res.failed[kind]++
			if res.firstError[kind] == nil {
				res.firstError[kind] = err
			}
			res.fdExhausted = res.fdExhausted || fdExhausted(err)
			continue
		}
		latencySum += latencies[i]
		// Within the histogram's hour by construction: the client times out first.
		_ = res.latency.RecordValue(max(1, latencies[i].Microseconds()))
	}
	if ok := res.succeeded(); ok > 0 {
		res.meanMS = float64(latencySum) / float64(ok) / float64(time.Millisecond)
	}
	return res
}

func (r result) errors() int {
	total := 0
	for _, count := range r.failed {
		total += count
	}
	return total
}

func (r result) succeeded() int {
	return r.requests - r.errors()
}

// requestsPerSecond is the successful requests over the fan-out's wall time.
func (r result) requestsPerSecond() float64 {
	if r.wall <= 0 {
		return 0
	}
	return float64(r.succeeded()) / r.wall.Seconds()
}

// metrics are the run's figures in the order the benchmark line prints
// them; target.toml's [program].metrics lists the same units.
func (r result) metrics() []benchline.Metric {
	const ms = 1000.0 // the histogram holds microseconds
	metrics := []benchline.Metric{
		{Value: float64(r.wall.Nanoseconds()), Unit: "ns/op"},
		{Value: r.requestsPerSecond(), Unit: "req/s"},
		{Value: float64(r.latency.ValueAtQuantile(50)) / ms, Unit: "p50-ms"},
		{Value: float64(r.latency.ValueAtQuantile(99)) / ms, Unit: "p99-ms"},
		{Value: r.meanMS, Unit: "mean-ms"},
		{Value: r.bytesPerReq, Unit: "B/op"},
		{Value: r.allocsPerReq, Unit: "allocs/op"},
		{Value: float64(r.requests), Unit: "requests"},
		{Value: float64(r.errors()), Unit: "errors"},
	}
	for kind := kindPortsExhausted; kind < kindCount; kind++ {
		metrics = append(metrics, benchline.Metric{Value: float64(r.failed[kind]), Unit: kind.unit()})
	}
	return append(metrics, benchline.Metric{Value: float64(r.dials), Unit: "dials"})
}

// verdict is the exit status and, when it is not 0, why. Failed requests
// are data; a fan-out in which none succeeded measured nothing.
func (r result) verdict() (int, string) {
	if r.succeeded() > 0 {
		return 0, ""
	}
	var first error
	for _, err := range r.firstError {
		if err != nil {
			first = err
			break
		}
	}
	return 1, fmt.Sprintf("no request succeeded: %d of %d failed (%s); first error: %v",
		r.errors(), r.requests, r.breakdown(), first)
}

// breakdown lists the failures by kind, e.g. "3 connect-errors, 1 timeouts".
func (r result) breakdown() string {
	var parts []string
	for kind := kindPortsExhausted; kind < kindCount; kind++ {
		if r.failed[kind] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", r.failed[kind], kind.unit()))
		}
	}
	return strings.Join(parts, ", ")
}

// diagnostics are the lines for stderr that explain the failures.
func (r result) diagnostics() []string {
	var lines []string
	if n := r.failed[kindPortsExhausted]; n > 0 {
		lines = append(lines, fmt.Sprintf(
			"%d requests found no free local port (EADDRNOTAVAIL): every connection holds an ephemeral port, "+
				"and a closed one stays in TIME_WAIT; ports %s (net.ipv4.ip_local_port_range), tcp_tw_reuse %s; first error: %v",
			n, sysctl("net/ipv4/ip_local_port_range"), sysctl("net/ipv4/tcp_tw_reuse"), r.firstError[kindPortsExhausted]))
	}
	if n := r.failed[kindConnect]; n > 0 {
		line := fmt.Sprintf("%d requests could not connect; first error: %v", n, r.firstError[kindConnect])
		if r.fdExhausted {
			line += fmt.Sprintf("; file descriptors ran out (EMFILE/ENFILE) with RLIMIT_NOFILE %d", r.fileLimit)
		}
		lines = append(lines, line)
	}
	if n := r.failed[kindTimeout]; n > 0 {
		lines = append(lines, fmt.Sprintf("%d requests timed out (timeout_ms %d); first error: %v",
			n, r.cfg.timeoutMS, r.firstError[kindTimeout]))
	}
	if n := r.failed[kindOther]; n > 0 {
		lines = append(lines, fmt.Sprintf("%d requests failed otherwise; first error: %v", n, r.firstError[kindOther]))
	}
	return lines
}

// sysctl is a /proc/sys value on one line, or "unknown".
func sysctl(name string) string {
	value, err := os.ReadFile("/proc/sys/" + name)
	if err != nil {
		return "unknown"
	}
	return strings.Join(strings.Fields(string(value)), "-")
}
