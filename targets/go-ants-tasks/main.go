// Command program runs a fixed batch of sleeping tasks through a bounded
// ants worker pool, or through one goroutine per task, and reports the
// throughput, each task's latency from submission to completion, the peak
// heap and the allocation per task as a Go benchmark line on stdout.
package main

import (
	"corobench/targets/go-common/benchline"
	"errors"
	"flag"
	"fmt"
	"os"
)

const pkg = "corobench/targets/go-ants-tasks"

func main() {
	cfg, err := parseFlags(os.Args[1:], os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "go-ants-tasks: %v\n", err)
		os.Exit(2)
	}
	res, err := run(cfg, realHooks())
	if err != nil {
		fmt.Fprintf(os.Stderr, "go-ants-tasks: %v\n", err)
		os.Exit(1)
	}
	for _, line := range res.diagnostics() {
		fmt.Fprintf(os.Stderr, "go-ants-tasks: %s\n", line)
	}
	benchline.WriteHeader(os.Stdout, pkg)
	benchline.WriteLine(os.Stdout, cfg.benchmarkName(), res.metrics())
	if code, reason := res.verdict(); code != 0 {
		fmt.Fprintf(os.Stderr, "go-ants-tasks: %s\n", reason)
		os.Exit(code)
	}
}
