// Command program starts a number of goroutines together, each doing one
// blocking HTTP GET, either on a fresh connection per request or through
// one shared keep-alive http.Transport, and reports the throughput, each
// request's latency, the allocation per request and the failures by kind
// as a Go benchmark line on stdout.
package main

import (
	"fmt"
	"os"

	"corobench/targets/go-common/program"
)

const pkg = "corobench/targets/go-fanout-client"

func main() {
	program.Main("go-fanout-client", pkg, parseFlags, func(cfg config) (program.Outcome, error) {
		fileLimit := checkFileLimit(cfg)
		res := run(cfg)
		res.fileLimit = fileLimit
		status, reason := res.verdict()
		return program.Outcome{
			Name: cfg.benchmarkName(), Metrics: res.metrics(), Notes: res.diagnostics(), Status: status, Reason: reason,
		}, nil
	})
}

// checkFileLimit raises RLIMIT_NOFILE to its hard limit and says on
// stderr, before the run, when it could not or when the limit is below
// what the goroutines may need at once; it returns the limit in force.
func checkFileLimit(cfg config) uint64 {
	fileLimit, err := raiseFileLimit()
	if err != nil {
		fmt.Fprintf(os.Stderr, "go-fanout-client: cannot raise RLIMIT_NOFILE to its hard limit (%v); it stays %d\n", err, fileLimit)
	}
	if fileLimit != 0 && fileLimit < uint64(cfg.goroutines)+64 {
		fmt.Fprintf(os.Stderr, "go-fanout-client: RLIMIT_NOFILE is %d, fewer than %d goroutines may need at once: expect connect errors (EMFILE)\n",
			fileLimit, cfg.goroutines)
	}
	return fileLimit
}
