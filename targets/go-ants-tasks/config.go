package main

import (
	"flag"
	"fmt"
	"io"

	"corobench/targets/go-common/program"
)

const (
	modePool       = "pool"
	modeGoroutines = "goroutines"
)

// config is one run's parameters; target.toml declares the same names,
// defaults and ranges.
type config struct {
	tasks       int
	poolSize    int
	queueLength int
	minMS       int
	maxMS       int
	seed        int
	mode        string
	submitters  int
}

// parseFlags reads the command line. Usage and errors go to stderr; a
// value out of range or an unknown mode is an error, as is a stray
// argument.
func parseFlags(args []string, stderr io.Writer) (config, error) {
	cfg := config{}
	err := program.Parse("go-ants-tasks", args, stderr, func(flags *flag.FlagSet) []program.IntRange {
		flags.IntVar(&cfg.tasks, "tasks", 10000, "tasks to run, each one sleep")
		flags.IntVar(&cfg.poolSize, "pool_size", 50, "ants workers: tasks that sleep at once (mode pool)")
		flags.IntVar(&cfg.queueLength, "queue_length", 1000,
			"submitters that may wait in Submit for a free worker (ants.WithMaxBlockingTasks; 0: no limit); beyond it Submit fails")
		flags.IntVar(&cfg.minMS, "min_ms", 10, "shortest sleep, milliseconds")
		flags.IntVar(&cfg.maxMS, "max_ms", 59, "longest sleep, milliseconds (inclusive)")
		flags.IntVar(&cfg.seed, "seed", 1, "seed of the sleeps, drawn before the first submission")
		flags.StringVar(&cfg.mode, "mode", modePool, "pool: through an ants pool; goroutines: one goroutine per task, unbounded")
		flags.IntVar(&cfg.submitters, "submitters", 1, "goroutines that submit the tasks, dealt round robin")
		return []program.IntRange{
			program.Int("tasks", &cfg.tasks, 1, 1_000_000),
			program.Int("pool_size", &cfg.poolSize, 1, 1_000_000),
			program.Int("queue_length", &cfg.queueLength, 0, 1_000_000),
			program.Int("min_ms", &cfg.minMS, 1, 60_000),
			program.Int("max_ms", &cfg.maxMS, 1, 60_000),
			program.Int("seed", &cfg.seed, 0, 4_294_967_295),
			program.Int("submitters", &cfg.submitters, 1, 1_000_000),
		}
	})
	if err != nil {
		return config{}, err
	}
	if cfg.maxMS < cfg.minMS {
		return config{}, fmt.Errorf("-max_ms (%d) must not be below -min_ms (%d)", cfg.maxMS, cfg.minMS)
	}
	if cfg.mode != modePool && cfg.mode != modeGoroutines {
		return config{}, fmt.Errorf("-mode must be %s or %s, got %q", modePool, modeGoroutines, cfg.mode)
	}
	return cfg, nil
}

// benchmarkName names the run after the parameters that shape the model;
// the sleeps' range and seed and the task count are the workload, the same
// for every line of a comparison.
func (c config) benchmarkName() string {
	name := "BenchmarkAntsTasks/mode=" + c.mode
	if c.mode == modePool {
		name += fmt.Sprintf("/pool_size=%d/queue_length=%d", c.poolSize, c.queueLength)
	}
	if c.submitters != 1 {
		name += fmt.Sprintf("/submitters=%d", c.submitters)
	}
	return name
}
