// Command program runs a fixed batch of sleeping tasks through a bounded
// ants worker pool, or through one goroutine per task, and reports the
// throughput, each task's latency from submission to completion, the peak
// heap and the allocation per task as a Go benchmark line on stdout.
package main

import "corobench/targets/go-common/program"

const pkg = "corobench/targets/go-ants-tasks"

func main() {
	program.Main("go-ants-tasks", pkg, parseFlags, func(cfg config) (program.Outcome, error) {
		res, err := run(cfg, realHooks())
		if err != nil {
			return program.Outcome{}, err
		}
		status, reason := res.verdict()
		return program.Outcome{
			Name: cfg.benchmarkName(), Metrics: res.metrics(), Notes: res.diagnostics(), Status: status, Reason: reason,
		}, nil
	})
}
