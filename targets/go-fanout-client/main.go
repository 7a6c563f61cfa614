// Command program starts a number of goroutines together, each doing one
// blocking HTTP GET, either on a fresh connection per request or through
// one shared keep-alive http.Transport, and reports the throughput, each
// request's latency, the allocation per request and the failures by kind
// as a Go benchmark line on stdout.
package main

import (
	"corobench/targets/go-common/benchline"
	"errors"
	"flag"
	"fmt"
	"os"
)

const pkg = "corobench/targets/go-fanout-client"

func main() {
	cfg, err := parseFlags(os.Args[1:], os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "go-fanout-client: %v\n", err)
		os.Exit(2)
	}
	fileLimit, err := raiseFileLimit()
	if err != nil {
		fmt.Fprintf(os.Stderr, "go-fanout-client: cannot raise RLIMIT_NOFILE to its hard limit (%v); it stays %d\n", err, fileLimit)
	}
	if fileLimit != 0 && fileLimit < uint64(cfg.goroutines)+64 {
		fmt.Fprintf(os.Stderr, "go-fanout-client: RLIMIT_NOFILE is %d, fewer than %d goroutines may need at once: expect connect errors (EMFILE)\n",
			fileLimit, cfg.goroutines)
	}
	res := run(cfg)
	res.fileLimit = fileLimit
	for _, line := range res.diagnostics() {
		fmt.Fprintf(os.Stderr, "go-fanout-client: %s\n", line)
	}
	benchline.WriteHeader(os.Stdout, pkg)
	benchline.WriteLine(os.Stdout, cfg.benchmarkName(), res.metrics())
	if code, reason := res.verdict(); code != 0 {
		fmt.Fprintf(os.Stderr, "go-fanout-client: %s\n", reason)
		os.Exit(code)
	}
}
