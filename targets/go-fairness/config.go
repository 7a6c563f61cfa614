package main

import (
	"flag"
	"fmt"
	"io"

	"corobench/targets/go-common/program"
)

// config is one run's parameters; target.toml declares the same names,
// defaults and ranges.
type config struct {
	shortTasks      int
	longTasks       int
	shortMS         int
	longMS          int
	shortIntervalMS int
	settleMS        int
}

// parseFlags reads the command line. Usage and errors go to stderr; a
// value out of range is an error, as is a stray argument.
func parseFlags(args []string, stderr io.Writer) (config, error) {
	cfg := config{}
	err := program.Parse("go-fairness", args, stderr, func(flags *flag.FlagSet) []program.IntRange {
		flags.IntVar(&cfg.shortTasks, "short_tasks", 10, "short CPU-bound tasks, released one after another")
		flags.IntVar(&cfg.longTasks, "long_tasks", 2, "long CPU-bound tasks, all started before the first short one")
		flags.IntVar(&cfg.shortMS, "short_ms", 50, "CPU work of one short task, milliseconds of this machine's solo time")
		flags.IntVar(&cfg.longMS, "long_ms", 5000, "CPU work of one long task, milliseconds of solo time")
		flags.IntVar(&cfg.shortIntervalMS, "short_interval_ms", 100, "time between two short tasks' releases (0: all at once)")
		flags.IntVar(&cfg.settleMS, "settle_ms", 20, "time between starting the long tasks and releasing the first short one")
		return []program.IntRange{
			program.Int("short_tasks", &cfg.shortTasks, 1, 10_000),
			program.Int("long_tasks", &cfg.longTasks, 0, 1_000),
			program.Int("short_ms", &cfg.shortMS, 1, 60_000),
			program.Int("long_ms", &cfg.longMS, 1, 600_000),
			program.Int("short_interval_ms", &cfg.shortIntervalMS, 0, 60_000),
			program.Int("settle_ms", &cfg.settleMS, 0, 60_000),
		}
	})
	if err != nil {
		return config{}, err
	}
	return cfg, nil
}

// benchmarkName names the run after the parameters that shape it.
func (c config) benchmarkName() string {
	return fmt.Sprintf("BenchmarkFairness/short_tasks=%d/long_tasks=%d/short_ms=%d/long_ms=%d",
		c.shortTasks, c.longTasks, c.shortMS, c.longMS)
}
