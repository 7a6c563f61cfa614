package main

import (
	"bytes"
	"corobench/targets/go-common/program/programtest"
	"slices"
	"testing"

	"corobench/targets/go-common/benchline"
)

// small is a run that takes a few milliseconds.
func small(long int) config {
	return config{shortTasks: 4, longTasks: long, shortMS: 1, longMS: 5, shortIntervalMS: 1, settleMS: 1}
}

func TestEveryTaskIsTimed(t *testing.T) {
	res, err := run(small(2))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.short) != 4 || len(res.long) != 2 {
		t.Fatalf("%d short and %d long latencies; want 4 and 2", len(res.short), len(res.long))
	}
	for _, latency := range append(slices.Clone(res.short), res.long...) {
		if latency <= 0 {
			t.Errorf("latency %v ms; every task ran, so each took some time", latency)
		}
	}
	if res.solo <= 0 || res.elapsed <= 0 {
		t.Errorf("solo %v ms, elapsed %v; want both positive", res.solo, res.elapsed)
	}
}

func TestWithoutLongTasksTheirFiguresAreZero(t *testing.T) {
	res, err := run(small(0))
	if err != nil {
		t.Fatal(err)
	}
	values := map[string]float64{}
	for _, m := range res.metrics() {
		values[m.Unit] = m.Value
	}
	if values["long-mean-ms"] != 0 || values["long-max-ms"] != 0 {
		t.Errorf("long figures %v, %v without long tasks; want 0", values["long-mean-ms"], values["long-max-ms"])
	}
	if values["short-mean-ms"] <= 0 || values["short-slowdown"] <= 0 {
		t.Errorf("short mean %v, slowdown %v; want positive", values["short-mean-ms"], values["short-slowdown"])
	}
}

func TestPercentileIsTheNearestRank(t *testing.T) {
	xs := []float64{10, 1, 9, 2, 8, 3, 7, 4, 6, 5}
	for p, want := range map[float64]float64{50: 5, 95: 10, 100: 10, 10: 1, 11: 2} {
		if got := percentile(xs, p); got != want {
			t.Errorf("p%v = %v; want %v", p, got, want)
		}
	}
	if got := percentile(nil, 95); got != 0 {
		t.Errorf("p95 of nothing = %v; want 0", got)
	}
	if xs[0] != 10 {
		t.Error("percentile sorted its argument in place")
	}
	if got := mean([]float64{1, 2, 6}); got != 3 {
		t.Errorf("mean = %v; want 3", got)
	}
}

func TestOutputCarriesEveryDeclaredMetric(t *testing.T) {
	res, err := run(small(1))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	benchline.WriteLine(&out, res.cfg.benchmarkName(), res.metrics())
	programtest.CheckLine(t, out.String(), "BenchmarkFairness/short_tasks=4/long_tasks=1/short_ms=1/long_ms=5-")
}

func TestFlags(t *testing.T) {
	cfg, err := parseFlags(nil, &bytes.Buffer{})
	want := config{shortTasks: 10, longTasks: 2, shortMS: 50, longMS: 5000, shortIntervalMS: 100, settleMS: 20}
	if err != nil || cfg != want {
		t.Errorf("defaults = %+v, %v; want %+v", cfg, err, want)
	}
	for _, bad := range []struct {
		args []string
		want string
	}{
		{[]string{"-short_tasks", "0"}, "-short_tasks must be in 1..10000, got 0"},
		{[]string{"-long_tasks", "-1"}, "-long_tasks must be in 0..1000, got -1"},
		{[]string{"-short_ms", "0"}, "-short_ms must be in 1..60000, got 0"},
		{[]string{"-long_ms", "600001"}, "-long_ms must be in 1..600000, got 600001"},
		{[]string{"-short_interval_ms", "-1"}, "-short_interval_ms must be in 0..60000, got -1"},
		{[]string{"stray"}, `unexpected argument "stray"`},
	} {
		if _, err := parseFlags(bad.args, &bytes.Buffer{}); err == nil || err.Error() != bad.want {
			t.Errorf("%v: error %v; want %q", bad.args, err, bad.want)
		}
	}
}
