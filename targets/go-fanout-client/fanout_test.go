package main

import (
	"bytes"
	"context"
	"corobench/targets/go-common/program/programtest"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
)

// server is a loopback HTTP server that counts the connections it accepts.
type server struct {
	*httptest.Server
	accepted atomic.Int64
}

func startServer(t *testing.T, handler http.HandlerFunc) *server {
	t.Helper()
	s := &server{Server: httptest.NewUnstartedServer(handler)}
	s.Config.ConnState = func(_ net.Conn, state http.ConnState) {
		if state == http.StateNew {
			s.accepted.Add(1)
		}
	}
	s.Start()
	t.Cleanup(s.Close)
	return s
}

func plaintext(w http.ResponseWriter, _ *http.Request) {
	_, _ = io.WriteString(w, "Hello, World!")
}

func settings(url, mode string, goroutines int) config {
	return config{url: url, goroutines: goroutines, mode: mode, maxIdlePerHost: 100, timeoutMS: 30_000}
}

func expectAllSucceeded(t *testing.T, res result, n int) {
	t.Helper()
	if res.requests != n || res.errors() != 0 || res.latency.TotalCount() != int64(n) {
		t.Fatalf("requests %d, errors %d (%s), latencies %d; want %d, 0, %d",
			res.requests, res.errors(), res.breakdown(), res.latency.TotalCount(), n, n)
	}
	if code, reason := res.verdict(); code != 0 {
		t.Errorf("verdict = %d %q; want 0", code, reason)
	}
}

func TestFreshModeOpensOneConnectionPerRequest(t *testing.T) {
	s := startServer(t, plaintext)
	res := run(settings(s.URL+"/plaintext", modeFresh, 60))
	expectAllSucceeded(t, res, 60)
	if accepted := s.accepted.Load(); accepted != 60 || res.dials != 60 {
		t.Errorf("server accepted %d connections, client dialled %d; want 60 and 60", accepted, res.dials)
	}
}

func TestPooledModeSharesConnections(t *testing.T) {
	s := startServer(t, plaintext)
	cfg := settings(s.URL+"/plaintext", modePooled, 100)
	cfg.maxConnsPerHost = 4
	res := run(cfg)
	expectAllSucceeded(t, res, 100)
	if accepted := s.accepted.Load(); accepted > 4 || res.dials > 4 {
		t.Errorf("server accepted %d connections, client dialled %d; want at most 4 for 100 requests", accepted, res.dials)
	}
}

// Without a bound on connections a burst still completes; how many
// connections it opens depends on timing, so only the upper bound holds.
func TestPooledModeWithoutConnectionBoundCompletesEveryRequest(t *testing.T) {
	s := startServer(t, plaintext)
	res := run(settings(s.URL+"/plaintext", modePooled, 100))
	expectAllSucceeded(t, res, 100)
	if res.dials < 1 || res.dials > 100 {
		t.Errorf("client dialled %d connections for 100 requests", res.dials)
	}
}

func TestUnreachableServerGivesConnectErrorsAndExitStatus1(t *testing.T) {
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	address := listener.Addr().String()
	listener.Close() // nobody listens there any more: connect is refused
	res := run(settings("http://"+address+"/plaintext", modePooled, 5))
	if res.requests != 5 || res.failed[kindConnect] != 5 || res.errors() != 5 {
		t.Fatalf("requests %d, connect-errors %d, errors %d (%s); want 5, 5, 5",
			res.requests, res.failed[kindConnect], res.errors(), res.breakdown())
	}
	if res.requestsPerSecond() != 0 || res.latency.TotalCount() != 0 {
		t.Errorf("req/s %v, latencies %d; want 0 and 0", res.requestsPerSecond(), res.latency.TotalCount())
	}
	code, reason := res.verdict()
	if code != 1 || !strings.HasPrefix(reason, "no request succeeded: 5 of 5 failed (5 connect-errors); first error: ") ||
		!strings.Contains(reason, "connection refused") {
		t.Errorf("verdict = %d %q; want 1 and the reason", code, reason)
	}
	if lines := res.diagnostics(); len(lines) != 1 || !strings.HasPrefix(lines[0], "5 requests could not connect") {
		t.Errorf("diagnostics = %q", lines)
	}
}

func TestAnswerOtherThan200IsAnError(t *testing.T) {
	s := startServer(t, func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "busy", http.StatusServiceUnavailable)
	})
	res := run(settings(s.URL, modePooled, 10))
	if res.failed[kindOther] != 10 || res.errors() != 10 {
		t.Fatalf("other-errors %d, errors %d (%s); want 10, 10", res.failed[kindOther], res.errors(), res.breakdown())
	}
	if code, _ := res.verdict(); code != 1 {
		t.Errorf("verdict = %d; want 1", code)
	}
	if lines := res.diagnostics(); len(lines) != 1 || !strings.Contains(lines[0], "unexpected status 503") {
		t.Errorf("diagnostics = %q", lines)
	}
}

func TestRequestsPastTheTimeoutCountAsTimeouts(t *testing.T) {
	release := make(chan struct{})
	s := startServer(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	t.Cleanup(func() { close(release) }) // runs before the server's Close
	cfg := settings(s.URL, modeFresh, 4)
	cfg.timeoutMS = 20 // the handler never answers before the test ends
	res := run(cfg)
	if res.failed[kindTimeout] != 4 || res.errors() != 4 {
		t.Errorf("timeouts %d, errors %d (%s); want 4, 4", res.failed[kindTimeout], res.errors(), res.breakdown())
	}
}

func TestClassify(t *testing.T) {
	dial := func(errno syscall.Errno) error {
		return &url.Error{Op: "Get", URL: "http://127.0.0.1:1/", Err: &net.OpError{
			Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", errno)}}
	}
	for _, c := range []struct {
		err  error
		want errorKind
	}{
		{nil, kindNone},
		{dial(syscall.EADDRNOTAVAIL), kindPortsExhausted},
		{dial(syscall.ECONNREFUSED), kindConnect},
		{dial(syscall.ECONNRESET), kindConnect},
		{&net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("socket", syscall.EMFILE)}, kindConnect},
		{&net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}, kindOther},
		{&url.Error{Op: "Get", URL: "http://x/", Err: context.DeadlineExceeded}, kindTimeout},
		{&net.OpError{Op: "dial", Net: "tcp", Err: os.ErrDeadlineExceeded}, kindTimeout},
		{&statusError{status: 500}, kindOther},
		{io.ErrUnexpectedEOF, kindOther},
		{fmt.Errorf("wrapped: %w", dial(syscall.EADDRNOTAVAIL)), kindPortsExhausted},
	} {
		if got := classify(c.err); got != c.want {
			t.Errorf("classify(%v) = %d; want %d", c.err, got, c.want)
		}
	}
	if !fdExhausted(dial(syscall.EMFILE)) || !fdExhausted(dial(syscall.ENFILE)) || fdExhausted(dial(syscall.ECONNREFUSED)) {
		t.Error("fdExhausted must recognise EMFILE and ENFILE only")
	}
}

func TestPortExhaustionIsExplained(t *testing.T) {
	res := result{cfg: settings("http://x/", modeFresh, 3), requests: 3}
	res.failed[kindPortsExhausted] = 2
	res.firstError[kindPortsExhausted] = errors.New("dial tcp: connect: cannot assign requested address")
	lines := res.diagnostics()
	if len(lines) != 1 || !strings.HasPrefix(lines[0], "2 requests found no free local port (EADDRNOTAVAIL)") ||
		!strings.Contains(lines[0], "ip_local_port_range") {
		t.Errorf("diagnostics = %q", lines)
	}
	if code, _ := res.verdict(); code != 0 {
		t.Errorf("verdict = %d; want 0: one request succeeded", code)
	}
}

func TestOutputIsABenchmarkLineWithEveryDeclaredMetric(t *testing.T) {
	s := startServer(t, plaintext)
	res := run(settings(s.URL+"/plaintext", modeFresh, 20))
	line := programtest.Output(t, pkg, res.cfg.benchmarkName(), res.metrics())
	if line.Name != "BenchmarkFanout/mode=fresh/goroutines=20" {
		t.Errorf("name %q", line.Name)
	}
	for unit, want := range map[string]float64{"requests": 20, "errors": 0, "ports-exhausted": 0, "connect-errors": 0,
		"timeouts": 0, "other-errors": 0, "dials": 20} {
		if line.Values[unit] != want {
			t.Errorf("%s = %v; want %v", unit, line.Values[unit], want)
		}
	}
	for _, unit := range []string{"ns/op", "req/s", "p50-ms", "p99-ms", "mean-ms", "B/op", "allocs/op"} {
		if line.Values[unit] <= 0 {
			t.Errorf("%s = %v; want a positive figure", unit, line.Values[unit])
		}
	}
}

func TestBenchmarkNames(t *testing.T) {
	cfg := settings("http://x/", modeFresh, 100000)
	if got := cfg.benchmarkName(); got != "BenchmarkFanout/mode=fresh/goroutines=100000" {
		t.Errorf("fresh: %s", got)
	}
	cfg.mode, cfg.goroutines, cfg.maxConnsPerHost = modePooled, 10000, 64
	if got := cfg.benchmarkName(); got != "BenchmarkFanout/mode=pooled/goroutines=10000/max_idle_per_host=100/max_conns_per_host=64" {
		t.Errorf("pooled: %s", got)
	}
}

func TestFlags(t *testing.T) {
	cfg, err := parseFlags([]string{"-url", "http://127.0.0.1:8080/plaintext"}, &bytes.Buffer{})
	want := config{url: "http://127.0.0.1:8080/plaintext", goroutines: 10000, mode: modePooled, maxIdlePerHost: 100, timeoutMS: 5000}
	if err != nil || cfg != want {
		t.Errorf("defaults = %+v, %v; want %+v", cfg, err, want)
	}
	cfg, err = parseFlags([]string{"-url", "http://h/p", "-goroutines", "100000", "-mode", "fresh",
		"-max_idle_per_host", "7", "-max_conns_per_host", "9", "-timeout_ms", "250"}, &bytes.Buffer{})
	want = config{url: "http://h/p", goroutines: 100000, mode: modeFresh, maxIdlePerHost: 7, maxConnsPerHost: 9, timeoutMS: 250}
	if err != nil || cfg != want {
		t.Errorf("parsed %+v, %v; want %+v", cfg, err, want)
	}
	const ok = "http://127.0.0.1:1/plaintext"
	for _, bad := range []struct {
		args []string
		want string
	}{
		{nil, "-url is required (the server to GET, e.g. http://127.0.0.1:8080/plaintext)"},
		{[]string{"-url", "127.0.0.1:8080/plaintext"}, `-url: parse "127.0.0.1:8080/plaintext": first path segment in URL cannot contain colon`},
		{[]string{"-url", "ftp://h/p"}, `-url must be an http:// or https:// URL with a host, got "ftp://h/p"`},
		{[]string{"-url", "http:///p"}, `-url must be an http:// or https:// URL with a host, got "http:///p"`},
		{[]string{"-url", ok, "-goroutines", "0"}, "-goroutines must be in 1..1000000, got 0"},
		{[]string{"-url", ok, "-goroutines", "1000001"}, "-goroutines must be in 1..1000000, got 1000001"},
		{[]string{"-url", ok, "-max_idle_per_host", "0"}, "-max_idle_per_host must be in 1..100000, got 0"},
		{[]string{"-url", ok, "-max_conns_per_host", "-1"}, "-max_conns_per_host must be in 0..100000, got -1"},
		{[]string{"-url", ok, "-timeout_ms", "0"}, "-timeout_ms must be in 1..600000, got 0"},
		{[]string{"-url", ok, "-mode", "reuse"}, `-mode must be fresh or pooled, got "reuse"`},
		{[]string{"-url", ok, "-goroutines", "many"}, `invalid value "many" for flag -goroutines: parse error`},
		{[]string{"-url", ok, "-requests", "3"}, "flag provided but not defined: -requests"},
		{[]string{"-url", ok, "extra"}, `unexpected argument "extra"`},
	} {
		if _, err := parseFlags(bad.args, &bytes.Buffer{}); err == nil || err.Error() != bad.want {
			t.Errorf("%v: error %v; want %q", bad.args, err, bad.want)
		}
	}
}

func TestRaiseFileLimit(t *testing.T) {
	limit, err := raiseFileLimit()
	if err != nil || limit == 0 {
		t.Errorf("raiseFileLimit() = %d, %v", limit, err)
	}
	var now syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &now); err != nil || now.Cur != now.Max {
		t.Errorf("RLIMIT_NOFILE soft %d, hard %d, %v; want soft = hard", now.Cur, now.Max, err)
	}
}
