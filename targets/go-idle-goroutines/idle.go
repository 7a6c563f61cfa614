package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"time"

	"corobench/targets/go-common/benchline"
	"corobench/targets/go-common/program"
)

const mib = 1 << 20

// config is one run's parameters; target.toml declares the same names,
// defaults and ranges.
type config struct {
	goroutines int
	waitMS     int
}

// parseFlags reads the command line. Usage and errors go to stderr; a
// value out of range is an error, as is a stray argument.
func parseFlags(args []string, stderr io.Writer) (config, error) {
	cfg := config{}
	err := program.Parse("go-idle-goroutines", args, stderr, func(flags *flag.FlagSet) []program.IntRange {
		flags.IntVar(&cfg.goroutines, "goroutines", 100000, "goroutines started, each then blocked on a channel until the end")
		flags.IntVar(&cfg.waitMS, "wait_ms", 5000, "time from the last goroutine's start to the reading, milliseconds")
		return []program.IntRange{
			program.Int("goroutines", &cfg.goroutines, 1, 10_000_000),
			program.Int("wait_ms", &cfg.waitMS, 0, 3_600_000),
		}
	})
	if err != nil {
		return config{}, err
	}
	return cfg, nil
}

func (c config) benchmarkName() string {
	return fmt.Sprintf("BenchmarkIdleGoroutines/goroutines=%d/wait_ms=%d", c.goroutines, c.waitMS)
}

// memory is one reading of the runtime's memory classes and the process's
// resident set, in bytes.
type memory struct {
	objects, stacks, rss uint64
}

var memoryClasses = []string{"/memory/classes/heap/objects:bytes", "/memory/classes/heap/stacks:bytes"}

// readMemory reads heap objects (live and unswept, what MemStats.HeapAlloc
// reports), goroutine stacks and the RSS of /proc/self/statm.
func readMemory() (memory, error) {
	samples := make([]metrics.Sample, len(memoryClasses))
	for i, name := range memoryClasses {
		samples[i].Name = name
	}
	metrics.Read(samples)
	rss, err := residentBytes()
	return memory{objects: samples[0].Value.Uint64(), stacks: samples[1].Value.Uint64(), rss: rss}, err
}

// residentBytes is the second field of /proc/self/statm (pages) in bytes.
func residentBytes() (uint64, error) {
	statm, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0, fmt.Errorf("reading the resident set: %w", err)
	}
	return parseStatm(string(statm), uint64(os.Getpagesize()))
}

func parseStatm(statm string, pageSize uint64) (uint64, error) {
	fields := strings.Fields(statm)
	if len(fields) < 2 {
		return 0, fmt.Errorf("/proc/self/statm %q has no resident field", statm)
	}
	pages, err := strconv.ParseUint(fields[1], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("/proc/self/statm resident field %q: %w", fields[1], err)
	}
	return pages * pageSize, nil
}

// result holds the readings before the goroutines start and after the wait.
type result struct {
	cfg           config
	before, after memory
	started       time.Duration
}

// run starts the goroutines, each parked on one channel, waits until every
// one runs, waits cfg.waitMS more and reads the memory, then releases them.
func run(cfg config) (result, error) {
	before, err := readMemory()
	if err != nil {
		return result{}, err
	}
	release := make(chan struct{})
	var running, done sync.WaitGroup
	running.Add(cfg.goroutines)
	start := time.Now()
	for range cfg.goroutines {
		done.Go(func() {
			running.Done()
			<-release
		})
	}
	running.Wait()
	started := time.Since(start)
	time.Sleep(time.Duration(cfg.waitMS) * time.Millisecond)
	after, err := readMemory()
	close(release)
	done.Wait()
	if err != nil {
		return result{}, err
	}
	return result{cfg: cfg, before: before, after: after, started: started}, nil
}

// grown is after − before, 0 where it shrank.
func grown(after, before uint64) float64 {
	if after < before {
		return 0
	}
	return float64(after - before)
}

// metrics are the result line's figures, in the order target.toml lists
// them: the heap (objects and stacks), each alone, the RSS, and what one
// goroutine added to the heap and to the RSS.
func (r result) metrics() []benchline.Metric {
	n := float64(r.cfg.goroutines)
	heap := float64(r.after.objects + r.after.stacks)
	heapGrown := grown(r.after.objects+r.after.stacks, r.before.objects+r.before.stacks)
	return []benchline.Metric{
		{Value: float64(r.started.Nanoseconds()), Unit: "ns/op"},
		{Value: heap / mib, Unit: "heap-MiB"},
		{Value: float64(r.after.stacks) / mib, Unit: "stacks-MiB"},
		{Value: float64(r.after.objects) / mib, Unit: "objects-MiB"},
		{Value: float64(r.after.rss) / mib, Unit: "rss-MiB"},
		{Value: heapGrown / n, Unit: "heap-B/goroutine"},
		{Value: grown(r.after.rss, r.before.rss) / n, Unit: "rss-B/goroutine"},
	}
}
