package main

import (
	"flag"
	"fmt"
	"io"
	"net/url"
	"time"

	"corobench/targets/go-common/program"
)

const (
	modeFresh  = "fresh"
	modePooled = "pooled"
)

// config is one run's parameters; target.toml declares the same names,
// defaults and ranges.
type config struct {
	url             string
	goroutines      int
	mode            string
	maxIdlePerHost  int
	maxConnsPerHost int
	timeoutMS       int
}

// parseFlags reads the command line. Usage and errors go to stderr; a
// missing or unusable URL, a value out of range, an unknown mode and a
// stray argument are errors.
func parseFlags(args []string, stderr io.Writer) (config, error) {
	cfg := config{}
	err := program.Parse("go-fanout-client", args, stderr, func(flags *flag.FlagSet) []program.IntRange {
		flags.StringVar(&cfg.url, "url", "", "the URL every goroutine GETs, e.g. http://127.0.0.1:8080/plaintext (required)")
		flags.IntVar(&cfg.goroutines, "goroutines", 10000, "goroutines started together, each doing one GET")
		flags.StringVar(&cfg.mode, "mode", modePooled,
			"fresh: a new connection per request (keep-alive off); pooled: one keep-alive Transport shared by all")
		flags.IntVar(&cfg.maxIdlePerHost, "max_idle_per_host", 100, "http.Transport.MaxIdleConnsPerHost (mode pooled)")
		flags.IntVar(&cfg.maxConnsPerHost, "max_conns_per_host", 0,
			"http.Transport.MaxConnsPerHost: connections open at once, 0 for no limit (Go's default)")
		flags.IntVar(&cfg.timeoutMS, "timeout_ms", 5000, "http.Client.Timeout per request, milliseconds")
		return []program.IntRange{
			program.Int("goroutines", &cfg.goroutines, 1, 1_000_000),
			program.Int("max_idle_per_host", &cfg.maxIdlePerHost, 1, 100_000),
			program.Int("max_conns_per_host", &cfg.maxConnsPerHost, 0, 100_000),
			program.Int("timeout_ms", &cfg.timeoutMS, 1, 600_000),
		}
	})
	if err != nil {
		return config{}, err
	}
	if err := checkURL(cfg.url); err != nil {
		return config{}, err
	}
	if cfg.mode != modeFresh && cfg.mode != modePooled {
		return config{}, fmt.Errorf("-mode must be %s or %s, got %q", modeFresh, modePooled, cfg.mode)
	}
	return cfg, nil
}

func checkURL(raw string) error {
	if raw == "" {
		return fmt.Errorf("-url is required (the server to GET, e.g. http://127.0.0.1:8080/plaintext)")
	}
	parsed, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("-url: %w", err)
	}
	if (parsed.Scheme != "http" && parsed.Scheme != "https") || parsed.Host == "" {
		return fmt.Errorf("-url must be an http:// or https:// URL with a host, got %q", raw)
	}
	return nil
}

func (c config) timeout() time.Duration {
	return time.Duration(c.timeoutMS) * time.Millisecond
}

// benchmarkName names the run after the mode, the fan-out and, in mode
// pooled, the pool's bound; max_conns_per_host appears only when set.
func (c config) benchmarkName() string {
	name := fmt.Sprintf("BenchmarkFanout/mode=%s/goroutines=%d", c.mode, c.goroutines)
	if c.mode == modePooled {
		name += fmt.Sprintf("/max_idle_per_host=%d", c.maxIdlePerHost)
	}
	if c.maxConnsPerHost != 0 {
		name += fmt.Sprintf("/max_conns_per_host=%d", c.maxConnsPerHost)
	}
	return name
}
