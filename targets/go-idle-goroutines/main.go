// Command program parks N goroutines on a channel, waits, and reports the
// heap they hold (objects and stacks), the process's resident set and the
// bytes one goroutine adds, as a Go benchmark line on stdout.
package main

import "corobench/targets/go-common/program"

const pkg = "corobench/targets/go-idle-goroutines"

func main() {
	program.Main("go-idle-goroutines", pkg, parseFlags, func(cfg config) (program.Outcome, error) {
		res, err := run(cfg)
		if err != nil {
			return program.Outcome{}, err
		}
		return program.Outcome{Name: cfg.benchmarkName(), Metrics: res.metrics()}, nil
	})
}
