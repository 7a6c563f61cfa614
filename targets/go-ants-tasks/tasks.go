package main

import (
	"corobench/targets/go-common/benchline"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/panjf2000/ants/v2"
)

// sampleEvery is how often the heap sampler reads the runtime's figures.
const sampleEvery = 2 * time.Millisecond

// hooks are what a test replaces: the task's work (time.Sleep in a run).
type hooks struct {
	sleep func(task int, d time.Duration)
	// rejected, when set, is told of every task Submit refused, after it
	// is counted.
	rejected func()
}

func realHooks() hooks {
	return hooks{sleep: func(_ int, d time.Duration) { time.Sleep(d) }}
}

// result is what one run measured.
type result struct {
	cfg       config
	completed int
	rejected  int
	// firstRefusal is the first error Submit returned, for the diagnostics.
	firstRefusal error
	// elapsed runs from the first submission to the last task's end.
	elapsed time.Duration
	// latency holds each completed task's done − submit, in microseconds.
	latency *hdrhistogram.Histogram
	meanMS  float64
	// peakHeap and peakStack are the highest heap-object and goroutine-stack
	// bytes the sampler saw.
	peakHeap, peakStack uint64
	bytesPerTask        float64
	allocsPerTask       float64
	// littlesBound is the most tasks/s the run could reach: its concurrency
	// over the mean sleep of the tasks it ran.
	littlesBound float64
}

// drawSleeps decides every task's sleep before anything is submitted, from
// the seed alone, so that runs with the same seed do the same work.
func drawSleeps(cfg config) []time.Duration {
	source := rand.New(rand.NewPCG(uint64(cfg.seed), 0))
	sleeps := make([]time.Duration, cfg.tasks)
	for i := range sleeps {
		ms := cfg.minMS + source.IntN(cfg.maxMS-cfg.minMS+1)
		sleeps[i] = time.Duration(ms) * time.Millisecond
	}
	return sleeps
}

// run submits cfg.tasks tasks and waits for all of them. Task i goes to
// submitter i mod cfg.submitters; each submitter submits its tasks in
// order, and all start together.
func run(cfg config, h hooks) (result, error) {
	sleeps := drawSleeps(cfg)
	var pool *ants.Pool
	if cfg.mode == modePool {
		var err error
		pool, err = ants.NewPool(cfg.poolSize, ants.WithMaxBlockingTasks(cfg.queueLength))
		if err != nil {
			return result{}, fmt.Errorf("cannot create the ants pool: %w", err)
		}
		defer pool.Release()
	}
	submitters := min(cfg.submitters, cfg.tasks)
	// Nanoseconds since base; a refused task's done stays -1.
	submitAt := make([]int64, cfg.tasks)
	doneAt := make([]int64, cfg.tasks)
	var (
		tasks        sync.WaitGroup
		rejected     atomic.Int64
		refusalOnce  sync.Once
		firstRefusal error
	)

	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	sampler := startHeapSampler(sampleEvery)
	start := make(chan struct{})
	var submitting sync.WaitGroup
	base := time.Now()
	for s := range submitters {
		submitting.Go(func() {
			<-start
			for i := s; i < cfg.tasks; i += submitters {
				tasks.Add(1)
				task := func() {
					h.sleep(i, sleeps[i])
					doneAt[i] = int64(time.Since(base))
					tasks.Done()
				}
				submitAt[i] = int64(time.Since(base))
				if pool == nil {
					go task()
					continue
				}
				if err := pool.Submit(task); err != nil {
					doneAt[i] = -1
					tasks.Done()
					rejected.Add(1)
					refusalOnce.Do(func() { firstRefusal = err })
					if h.rejected != nil {
						h.rejected()
					}
				}
			}
		})
	}
	close(start)
	submitting.Wait()
	tasks.Wait()
	runtime.ReadMemStats(&after)
	peakHeap, peakStack := sampler.stop()

	res := result{
		cfg:           cfg,
		rejected:      int(rejected.Load()),
		firstRefusal:  firstRefusal,
		latency:       hdrhistogram.New(1, int64(time.Hour/time.Microsecond), 3),
		peakHeap:      peakHeap,
		peakStack:     peakStack,
		bytesPerTask:  float64(after.TotalAlloc-before.TotalAlloc) / float64(cfg.tasks),
		allocsPerTask: float64(after.Mallocs-before.Mallocs) / float64(cfg.tasks),
	}
	firstSubmit, lastDone := int64(-1), int64(-1)
	var latencySum, sleepSum time.Duration
	for i := range cfg.tasks {
		if doneAt[i] < 0 {
			continue
		}
		res.completed++
		if firstSubmit < 0 || submitAt[i] < firstSubmit {
			firstSubmit = submitAt[i]
		}
		lastDone = max(lastDone, doneAt[i])
		latency := time.Duration(doneAt[i] - submitAt[i])
		latencySum += latency
		sleepSum += sleeps[i]
		if err := res.latency.RecordValue(max(1, latency.Microseconds())); err != nil {
			return result{}, fmt.Errorf("task %d latency %v: %w", i, latency, err)
		}
	}
	if res.completed > 0 {
		res.elapsed = time.Duration(lastDone - firstSubmit)
		res.meanMS = float64(latencySum) / float64(res.completed) / float64(time.Millisecond)
		concurrency := res.completed // mode goroutines: every task may sleep at once
		if pool != nil {
			concurrency = min(cfg.poolSize, res.completed)
		}
		meanSleep := sleepSum.Seconds() / float64(res.completed)
		res.littlesBound = float64(concurrency) / meanSleep
	}
	return res, nil
}

// tasksPerSecond is the completed tasks over the span from the first
// submission to the last completion.
func (r result) tasksPerSecond() float64 {
	if r.elapsed <= 0 {
		return 0
	}
	return float64(r.completed) / r.elapsed.Seconds()
}

// metrics are the run's figures in the order the benchmark line prints
// them; target.toml's [program].metrics lists the same units.
func (r result) metrics() []benchline.Metric {
	const ms = 1000.0 // the histogram holds microseconds
	const mb = 1e6
	return []benchline.Metric{
		{Value: float64(r.elapsed.Nanoseconds()), Unit: "ns/op"},
		{Value: r.tasksPerSecond(), Unit: "tasks/s"},
		{Value: float64(r.latency.ValueAtQuantile(50)) / ms, Unit: "p50-ms"},
		{Value: float64(r.latency.ValueAtQuantile(99)) / ms, Unit: "p99-ms"},
		{Value: r.meanMS, Unit: "mean-ms"},
		{Value: float64(r.peakHeap) / mb, Unit: "peak-heap-MB"},
		{Value: float64(r.peakStack) / mb, Unit: "peak-stack-MB"},
		{Value: r.bytesPerTask, Unit: "B/op"},
		{Value: r.allocsPerTask, Unit: "allocs/op"},
		{Value: float64(r.completed), Unit: "completed"},
		{Value: float64(r.rejected), Unit: "rejected"},
		{Value: r.littlesBound, Unit: "littles-bound-tasks/s"},
	}
}

// verdict is the exit status and, when it is not 0, why. Refused tasks are
// data; a run in which no task completed measured nothing.
func (r result) verdict() (int, string) {
	if r.completed > 0 {
		return 0, ""
	}
	reason := "no task completed"
	if r.firstRefusal != nil {
		reason += fmt.Sprintf(": Submit refused all %d (%v)", r.rejected, r.firstRefusal)
	}
	return 1, reason
}

// diagnostics are the lines for stderr that explain the figures.
func (r result) diagnostics() []string {
	var lines []string
	if r.rejected > 0 {
		what := "the queue was full"
		if !errors.Is(r.firstRefusal, ants.ErrPoolOverload) {
			what = "the pool refused them"
		}
		lines = append(lines, fmt.Sprintf("%d of %d tasks were not run: %s (first error: %v)",
			r.rejected, r.cfg.tasks, what, r.firstRefusal))
	}
	return lines
}

// heapSampler keeps the highest heap-object and goroutine-stack bytes the
// runtime reports, read every few milliseconds on its own goroutine.
type heapSampler struct {
	quit      chan struct{}
	done      chan struct{}
	peakHeap  uint64
	peakStack uint64
}

func startHeapSampler(every time.Duration) *heapSampler {
	s := &heapSampler{quit: make(chan struct{}), done: make(chan struct{})}
	samples := []metrics.Sample{
		{Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/memory/classes/heap/stacks:bytes"},
	}
	read := func() {
		metrics.Read(samples)
		s.peakHeap = max(s.peakHeap, samples[0].Value.Uint64())
		s.peakStack = max(s.peakStack, samples[1].Value.Uint64())
	}
	read()
	go func() {
		defer close(s.done)
		ticker := time.NewTicker(every)
		defer ticker.Stop()
		for {
			select {
			case <-s.quit:
				read()
				return
			case <-ticker.C:
				read()
			}
		}
	}()
	return s
}

// stop ends the sampling after one last reading and returns the peaks.
func (s *heapSampler) stop() (heap, stack uint64) {
	close(s.quit)
	<-s.done
	return s.peakHeap, s.peakStack
}
