package main

import (
	"bytes"
	"corobench/targets/go-common/benchline"
	"corobench/targets/go-common/program/programtest"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/panjf2000/ants/v2"
)

// small is a run that finishes in a few tens of milliseconds.
func small(mode string) config {
	return config{tasks: 40, poolSize: 4, queueLength: 100, minMS: 1, maxMS: 2, seed: 1, mode: mode, submitters: 1}
}

func mustRun(t *testing.T, cfg config, h hooks) result {
	t.Helper()
	res, err := run(cfg, h)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestPoolRunsEveryTask(t *testing.T) {
	res := mustRun(t, small(modePool), realHooks())
	if res.completed != 40 || res.rejected != 0 || res.latency.TotalCount() != 40 {
		t.Errorf("completed %d, rejected %d, latencies %d; want 40, 0, 40",
			res.completed, res.rejected, res.latency.TotalCount())
	}
	if code, reason := res.verdict(); code != 0 {
		t.Errorf("verdict = %d %q; want 0", code, reason)
	}
}

func TestGoroutinesModeRunsEveryTask(t *testing.T) {
	cfg := small(modeGoroutines)
	cfg.submitters = 3
	res := mustRun(t, cfg, realHooks())
	if res.completed != 40 || res.rejected != 0 || res.latency.TotalCount() != 40 {
		t.Errorf("completed %d, rejected %d, latencies %d; want 40, 0, 40",
			res.completed, res.rejected, res.latency.TotalCount())
	}
}

// With one worker held busy and room for one waiting submitter, three of
// five concurrent submitters are refused, and refused tasks are not
// retried.
func TestSubmitBeyondTheQueueIsRejected(t *testing.T) {
	cfg := config{tasks: 5, poolSize: 1, queueLength: 1, minMS: 1, maxMS: 1, seed: 1, mode: modePool, submitters: 5}
	gate := make(chan struct{})
	var openGate sync.Once
	release := func() { openGate.Do(func() { close(gate) }) }
	// Only keeps a broken pool from hanging the test; not a timing assertion.
	watchdog := time.AfterFunc(30*time.Second, func() {
		t.Error("fewer than 3 submissions were rejected")
		release()
	})
	defer watchdog.Stop()
	var ran sync.Map
	var refusals int
	var mu sync.Mutex
	h := hooks{
		sleep: func(task int, _ time.Duration) {
			ran.Store(task, true)
			<-gate
		},
		rejected: func() {
			mu.Lock()
			defer mu.Unlock()
			refusals++
			if refusals == 3 {
				release()
			}
		},
	}
	res := mustRun(t, cfg, h)
	if res.completed != 2 || res.rejected != 3 {
		t.Errorf("completed %d, rejected %d; want 2, 3", res.completed, res.rejected)
	}
	if !errors.Is(res.firstRefusal, ants.ErrPoolOverload) {
		t.Errorf("first refusal = %v; want ants.ErrPoolOverload", res.firstRefusal)
	}
	count := 0
	ran.Range(func(_, _ any) bool { count++; return true })
	if count != 2 {
		t.Errorf("%d tasks ran; want 2 (a refused task is not retried)", count)
	}
	if lines := res.diagnostics(); len(lines) != 1 || !strings.HasPrefix(lines[0], "3 of 5 tasks were not run: the queue was full") {
		t.Errorf("diagnostics = %q", lines)
	}
	if code, _ := res.verdict(); code != 0 {
		t.Errorf("verdict = %d; want 0: rejections are data", code)
	}
}

func TestNothingCompletedFailsTheRun(t *testing.T) {
	res := result{cfg: small(modePool), rejected: 40, firstRefusal: ants.ErrPoolOverload}
	code, reason := res.verdict()
	if code != 1 || !strings.HasPrefix(reason, "no task completed: Submit refused all 40") {
		t.Errorf("verdict = %d %q; want 1 and the reason", code, reason)
	}
}

// recordSleeps runs cfg and returns the sleep each task was given.
func recordSleeps(t *testing.T, cfg config) []time.Duration {
	t.Helper()
	got := make([]time.Duration, cfg.tasks)
	mustRun(t, cfg, hooks{sleep: func(task int, d time.Duration) { got[task] = d }})
	return got
}

func TestSeededSleepsAreIdenticalAcrossRuns(t *testing.T) {
	cfg := config{tasks: 200, poolSize: 8, queueLength: 1000, minMS: 10, maxMS: 59, seed: 7, mode: modePool, submitters: 1}
	first, second := recordSleeps(t, cfg), recordSleeps(t, cfg)
	if !slices.Equal(first, second) {
		t.Error("two runs with the same seed gave different sleeps")
	}
	distinct := map[time.Duration]bool{}
	for _, d := range first {
		if d < 10*time.Millisecond || d > 59*time.Millisecond || d%time.Millisecond != 0 {
			t.Fatalf("sleep %v is not a whole number of milliseconds in 10..59", d)
		}
		distinct[d] = true
	}
	if len(distinct) < 2 {
		t.Errorf("200 sleeps took %d distinct values", len(distinct))
	}
	cfg.seed = 8
	if slices.Equal(first, recordSleeps(t, cfg)) {
		t.Error("seeds 7 and 8 gave the same sleeps")
	}
}

func TestOutputIsABenchmarkLineWithEveryDeclaredMetric(t *testing.T) {
	res := mustRun(t, small(modePool), realHooks())
	line := programtest.Output(t, pkg, res.cfg.benchmarkName(), res.metrics())
	if line.Name != "BenchmarkAntsTasks/mode=pool/pool_size=4/queue_length=100" {
		t.Errorf("name %q", line.Name)
	}
	if line.Values["completed"] != 40 || line.Values["rejected"] != 0 {
		t.Errorf("completed %v, rejected %v; want 40, 0", line.Values["completed"], line.Values["rejected"])
	}
	for _, unit := range []string{"ns/op", "tasks/s", "p50-ms", "peak-heap-MB", "littles-bound-tasks/s"} {
		if line.Values[unit] <= 0 {
			t.Errorf("%s = %v; want a positive figure", unit, line.Values[unit])
		}
	}
}

func TestBenchmarkNames(t *testing.T) {
	cfg := config{tasks: 10000, poolSize: 50, queueLength: 1000, minMS: 10, maxMS: 59, seed: 1, mode: modePool, submitters: 1}
	if got := cfg.benchmarkName(); got != "BenchmarkAntsTasks/mode=pool/pool_size=50/queue_length=1000" {
		t.Errorf("pool: %s", got)
	}
	cfg.mode, cfg.submitters = modeGoroutines, 4
	if got := cfg.benchmarkName(); got != "BenchmarkAntsTasks/mode=goroutines/submitters=4" {
		t.Errorf("goroutines: %s", got)
	}
}

func TestFormatValue(t *testing.T) {
	for value, want := range map[float64]string{
		0: "0", 40: "40", 1449: "1449", 1449.28: "1449", 474.7: "474.7", 34.94: "34.94", 3.2204: "3.220", 0.18994: "0.1899",
	} {
		if got := benchline.FormatValue(value); got != want {
			t.Errorf("benchline.FormatValue(%v) = %s; want %s", value, got, want)
		}
	}
}

func TestFlags(t *testing.T) {
	cfg, err := parseFlags(nil, &bytes.Buffer{})
	want := config{tasks: 10000, poolSize: 50, queueLength: 1000, minMS: 10, maxMS: 59, seed: 1, mode: modePool, submitters: 1}
	if err != nil || cfg != want {
		t.Errorf("defaults = %+v, %v; want %+v", cfg, err, want)
	}
	cfg, err = parseFlags([]string{"-tasks", "200", "-mode", "goroutines", "-queue_length", "0", "-min_ms", "3", "-max_ms", "3"}, &bytes.Buffer{})
	if err != nil || cfg.tasks != 200 || cfg.mode != modeGoroutines || cfg.queueLength != 0 || cfg.minMS != 3 || cfg.maxMS != 3 {
		t.Errorf("parsed %+v, %v", cfg, err)
	}
	for _, bad := range []struct {
		args []string
		want string
	}{
		{[]string{"-tasks", "0"}, "-tasks must be in 1..1000000, got 0"},
		{[]string{"-tasks", "1000001"}, "-tasks must be in 1..1000000, got 1000001"},
		{[]string{"-pool_size", "0"}, "-pool_size must be in 1..1000000, got 0"},
		{[]string{"-queue_length", "-1"}, "-queue_length must be in 0..1000000, got -1"},
		{[]string{"-min_ms", "0"}, "-min_ms must be in 1..60000, got 0"},
		{[]string{"-min_ms", "20", "-max_ms", "10"}, "-max_ms (10) must not be below -min_ms (20)"},
		{[]string{"-seed", "-1"}, "-seed must be in 0..4294967295, got -1"},
		{[]string{"-submitters", "0"}, "-submitters must be in 1..1000000, got 0"},
		{[]string{"-mode", "threads"}, `-mode must be pool or goroutines, got "threads"`},
		{[]string{"-tasks", "ten"}, `invalid value "ten" for flag -tasks: parse error`},
		{[]string{"-workers", "3"}, "flag provided but not defined: -workers"},
		{[]string{"extra"}, `unexpected argument "extra"`},
	} {
		if _, err := parseFlags(bad.args, &bytes.Buffer{}); err == nil || err.Error() != bad.want {
			t.Errorf("%v: error %v; want %q", bad.args, err, bad.want)
		}
	}
}
