package main

import (
	"errors"
	"math"
	"slices"
	"sync"
	"time"

	"corobench/targets/go-common/benchline"
)

// calibrationChunk is the spin length timed to learn this machine's speed.
const calibrationChunk = 1 << 20

// calibrationRounds are the timings of one chunk; their median counts, so
// that one chunk slowed (or one cut short by a coarse clock) does not size
// every task.
const calibrationRounds = 9

// result is what one run measured, latencies in milliseconds.
type result struct {
	cfg   config
	solo  float64
	short []float64
	long  []float64
	// elapsed runs from the long tasks' start to the last task's end.
	elapsed time.Duration
}

// spin is the CPU work of every task: n rounds of xorshift, whose result
// is returned so the compiler cannot drop the loop.
func spin(n int) uint64 {
	x := uint64(88172645463325252)
	for range n {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	return x
}

// sink keeps every spin's result alive.
var sink struct {
	sync.Mutex
	value uint64
}

func keep(x uint64) {
	sink.Lock()
	sink.value ^= x
	sink.Unlock()
}

// roundsPerMS is how many spin rounds take a millisecond here, timed
// before any other task starts.
func roundsPerMS() (float64, error) {
	timings := make([]float64, calibrationRounds)
	for i := range timings {
		start := time.Now()
		keep(spin(calibrationChunk))
		timings[i] = milliseconds(time.Since(start))
	}
	typical := percentile(timings, 50)
	if typical <= 0 {
		return 0, errors.New("the clock did not advance over a calibration spin; cannot size the tasks")
	}
	return calibrationChunk / typical, nil
}

func milliseconds(d time.Duration) float64 {
	return float64(d) / float64(time.Millisecond)
}

// run times one short task alone, then starts the long tasks, releases the
// short ones one after another beside them and waits for every task. A
// short task's latency runs from its intended release to its end, so a
// release the scheduler delays counts against it.
func run(cfg config) (result, error) {
	perMS, err := roundsPerMS()
	if err != nil {
		return result{}, err
	}
	shortRounds := int(perMS * float64(cfg.shortMS))
	longRounds := int(perMS * float64(cfg.longMS))
	start := time.Now()
	keep(spin(shortRounds))
	res := result{
		cfg:   cfg,
		solo:  milliseconds(time.Since(start)),
		short: make([]float64, cfg.shortTasks),
		long:  make([]float64, cfg.longTasks),
	}
	var wg sync.WaitGroup
	launch := func(latency *float64, from time.Time, rounds int) {
		wg.Go(func() {
			keep(spin(rounds))
			*latency = milliseconds(time.Since(from))
		})
	}
	longStart := time.Now()
	for i := range res.long {
		launch(&res.long[i], longStart, longRounds)
	}
	time.Sleep(time.Duration(cfg.settleMS) * time.Millisecond)
	first := time.Now()
	interval := time.Duration(cfg.shortIntervalMS) * time.Millisecond
	for i := range res.short {
		release := first.Add(time.Duration(i) * interval)
		time.Sleep(time.Until(release))
		launch(&res.short[i], release, shortRounds)
	}
	wg.Wait()
	res.elapsed = time.Since(longStart)
	return res, nil
}

// mean of xs, 0 for none.
func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	total := 0.0
	for _, x := range xs {
		total += x
	}
	return total / float64(len(xs))
}

// percentile is the nearest-rank p-th percentile (0 < p ≤ 100) of xs, 0
// for none: with 10 values the 95th is the largest.
func percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	sorted := slices.Clone(xs)
	slices.Sort(sorted)
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	return sorted[max(rank, 1)-1]
}

// metrics are the result line's figures, in the order target.toml lists
// them; the long tasks' figures are 0 when there are none.
func (r result) metrics() []benchline.Metric {
	slowdown := 0.0
	if r.solo > 0 {
		slowdown = mean(r.short) / r.solo
	}
	return []benchline.Metric{
		{Value: float64(r.elapsed.Nanoseconds()), Unit: "ns/op"},
		{Value: mean(r.short), Unit: "short-mean-ms"},
		{Value: percentile(r.short, 50), Unit: "short-p50-ms"},
		{Value: percentile(r.short, 95), Unit: "short-p95-ms"},
		{Value: percentile(r.short, 100), Unit: "short-max-ms"},
		{Value: r.solo, Unit: "solo-ms"},
		{Value: slowdown, Unit: "short-slowdown"},
		{Value: mean(r.long), Unit: "long-mean-ms"},
		{Value: percentile(r.long, 100), Unit: "long-max-ms"},
	}
}
