package main

import (
	"bytes"
	"strings"
	"testing"

	"corobench/targets/go-common/benchline"
	"corobench/targets/go-common/program/programtest"
)

func TestEveryGoroutineRunsAndTheHeapHoldsTheirStacks(t *testing.T) {
	res, err := run(config{goroutines: 2000, waitMS: 0})
	if err != nil {
		t.Fatal(err)
	}
	// Each parked goroutine keeps a stack of at least 2 KiB, the runtime's
	// smallest; the runtime may hand out more, never less.
	if grew := res.after.stacks - res.before.stacks; res.after.stacks < res.before.stacks || grew < 2000*2048 {
		t.Errorf("stacks grew from %d to %d bytes for 2,000 goroutines; want at least 2 KiB each", res.before.stacks, res.after.stacks)
	}
	if res.after.rss == 0 {
		t.Error("no resident set read")
	}
}

func TestParseStatm(t *testing.T) {
	if got, err := parseStatm("6190 1203 800 200 0 1500 0\n", 4096); err != nil || got != 1203*4096 {
		t.Errorf("parseStatm = %d, %v; want %d", got, err, 1203*4096)
	}
	for _, bad := range []string{"", "6190", "6190 x 800"} {
		if _, err := parseStatm(bad, 4096); err == nil {
			t.Errorf("parseStatm(%q) read a resident set", bad)
		}
	}
}

func TestFiguresPerGoroutineAndTheLine(t *testing.T) {
	res := result{
		cfg:    config{goroutines: 1000, waitMS: 5},
		before: memory{objects: 1 << 20, stacks: 1 << 20, rss: 8 << 20},
		after:  memory{objects: 2 << 20, stacks: 3 << 20, rss: 7 << 20},
	}
	values := map[string]float64{}
	for _, m := range res.metrics() {
		values[m.Unit] = m.Value
	}
	if values["heap-MiB"] != 5 || values["stacks-MiB"] != 3 || values["objects-MiB"] != 2 {
		t.Errorf("heap %v, stacks %v, objects %v MiB; want 5, 3, 2", values["heap-MiB"], values["stacks-MiB"], values["objects-MiB"])
	}
	if values["heap-B/goroutine"] != float64(3<<20)/1000 || values["rss-B/goroutine"] != 0 {
		t.Errorf("per goroutine: heap %v, rss %v; want %v and 0 (the RSS shrank)",
			values["heap-B/goroutine"], values["rss-B/goroutine"], float64(3<<20)/1000)
	}
	var out bytes.Buffer
	benchline.WriteLine(&out, res.cfg.benchmarkName(), res.metrics())
	programtest.CheckLine(t, out.String(), "BenchmarkIdleGoroutines/goroutines=1000/wait_ms=5-")
}

func TestFlags(t *testing.T) {
	cfg, err := parseFlags(nil, &bytes.Buffer{})
	if want := (config{goroutines: 100000, waitMS: 5000}); err != nil || cfg != want {
		t.Errorf("defaults = %+v, %v; want %+v", cfg, err, want)
	}
	for args, want := range map[string]string{
		"-goroutines 0":  "-goroutines must be in 1..10000000, got 0",
		"-wait_ms -1":    "-wait_ms must be in 0..3600000, got -1",
		"-wait_ms 1 two": `unexpected argument "two"`,
	} {
		if _, err := parseFlags(strings.Fields(args), &bytes.Buffer{}); err == nil || err.Error() != want {
			t.Errorf("%s: error %v; want %q", args, err, want)
		}
	}
}
