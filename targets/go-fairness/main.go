// Command program measures how fairly the Go scheduler shares the CPU:
// it releases short CPU-bound tasks one after another beside long
// CPU-bound tasks and reports the short tasks' latencies (from release to
// end), the long tasks' and a short task's time alone, as a Go benchmark
// line on stdout.
package main

import "corobench/targets/go-common/program"

const pkg = "corobench/targets/go-fairness"

func main() {
	program.Main("go-fairness", pkg, parseFlags, func(cfg config) (program.Outcome, error) {
		res, err := run(cfg)
		if err != nil {
			return program.Outcome{}, err
		}
		return program.Outcome{Name: cfg.benchmarkName(), Metrics: res.metrics()}, nil
	})
}
