// Command program parks N goroutines on a channel, waits, and reports the
// heap they hold (objects and stacks), the process's resident set and the
// bytes one goroutine adds, as a Go benchmark line on stdout.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"

	"corobench/targets/go-common/benchline"
)

const pkg = "corobench/targets/go-idle-goroutines"

func main() {
	cfg, err := parseFlags(os.Args[1:], os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "go-idle-goroutines: %v\n", err)
		os.Exit(2)
	}
	res, err := run(cfg)
	if err != nil {
		fmt.Fprintf(os.Stderr, "go-idle-goroutines: %v\n", err)
		os.Exit(1)
	}
	benchline.WriteHeader(os.Stdout, pkg)
	benchline.WriteLine(os.Stdout, cfg.benchmarkName(), res.metrics())
}
