// Command program measures how fairly the Go scheduler shares the CPU:
// it releases short CPU-bound tasks one after another beside long
// CPU-bound tasks and reports the short tasks' latencies (from release to
// end), the long tasks' and a short task's time alone, as a Go benchmark
// line on stdout.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"

	"corobench/targets/go-common/benchline"
)

const pkg = "corobench/targets/go-fairness"

func main() {
	cfg, err := parseFlags(os.Args[1:], os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "go-fairness: %v\n", err)
		os.Exit(2)
	}
	res, err := run(cfg)
	if err != nil {
		fmt.Fprintf(os.Stderr, "go-fairness: %v\n", err)
		os.Exit(1)
	}
	benchline.WriteHeader(os.Stdout, pkg)
	benchline.WriteLine(os.Stdout, cfg.benchmarkName(), res.metrics())
}
