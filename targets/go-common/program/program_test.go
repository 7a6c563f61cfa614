package program

import (
	"bytes"
	"errors"
	"flag"
	"io"
	"slices"
	"strings"
	"testing"

	"corobench/targets/go-common/benchline"
)

func TestCheckRangesNamesTheFirstFlagOutside(t *testing.T) {
	low, high := 0, 7
	ranges := []IntRange{Int("low", &low, 1, 5), Int("high", &high, 1, 5)}
	if err := CheckRanges(ranges); err == nil || err.Error() != "-low must be in 1..5, got 0" {
		t.Errorf("error %v", err)
	}
	low = 1
	if err := CheckRanges(ranges); err == nil || err.Error() != "-high must be in 1..5, got 7" {
		t.Errorf("error %v", err)
	}
	high = 5
	if err := CheckRanges(ranges); err != nil {
		t.Errorf("values at the bounds refused: %v", err)
	}
}

func TestDeclaredMetrics(t *testing.T) {
	manifest := []byte("[program]\nserver = \"none\"\nmetrics = [\"tasks/s\", \"p99-ms\"]\n")
	units, err := metrics(manifest)
	if err != nil || !slices.Equal(units, []string{"tasks/s", "p99-ms"}) {
		t.Errorf("units %v, %v", units, err)
	}
	if _, err := metrics([]byte("[program]\n")); err == nil {
		t.Error("a manifest without metrics was read")
	}
	if _, err := metrics([]byte("metrics = [tasks]\n")); err == nil {
		t.Error("an unquoted unit was read")
	}
	if _, err := DeclaredMetrics("no-such-target.toml"); err == nil {
		t.Error("a missing manifest was read")
	}
}

// parseCount is a program's parse: one flag -n in 1..9.
func parseCount(args []string, stderr io.Writer) (int, error) {
	n := 0
	err := Parse("count", args, stderr, func(flags *flag.FlagSet) []IntRange {
		flags.IntVar(&n, "n", 3, "a count")
		return []IntRange{Int("n", &n, 1, 9)}
	})
	return n, err
}

func TestParseReadsFlagsAndRefusesWhatIsOutsideThem(t *testing.T) {
	if n, err := parseCount(nil, &bytes.Buffer{}); err != nil || n != 3 {
		t.Errorf("default = %d, %v; want 3", n, err)
	}
	if n, err := parseCount([]string{"-n", "9"}, &bytes.Buffer{}); err != nil || n != 9 {
		t.Errorf("-n 9 = %d, %v", n, err)
	}
	for _, bad := range []struct {
		args []string
		want string
	}{
		{[]string{"-n", "10"}, "-n must be in 1..9, got 10"},
		{[]string{"-n", "x"}, `invalid value "x" for flag -n: parse error`},
		{[]string{"-m", "1"}, "flag provided but not defined: -m"},
		{[]string{"-n", "2", "stray"}, `unexpected argument "stray"`},
	} {
		if _, err := parseCount(bad.args, &bytes.Buffer{}); err == nil || err.Error() != bad.want {
			t.Errorf("%v: error %v; want %q", bad.args, err, bad.want)
		}
	}
	var usage bytes.Buffer
	if _, err := parseCount([]string{"-h"}, &usage); !errors.Is(err, flag.ErrHelp) || !strings.Contains(usage.String(), "a count") {
		t.Errorf("-h: %v, usage %q", err, usage.String())
	}
}

// outcomeOf runs execute with parseCount and a run that reports n.
func outcomeOf(args []string, status int, runErr error) (int, string, string) {
	var stdout, stderr bytes.Buffer
	code := execute("count", "corobench/count", args, &stdout, &stderr, parseCount, func(n int) (Outcome, error) {
		return Outcome{
			Name:    "BenchmarkCount",
			Metrics: []benchline.Metric{{Value: float64(n), Unit: "things"}},
			Notes:   []string{"counted"},
			Status:  status,
			Reason:  "too few",
		}, runErr
	})
	return code, stdout.String(), stderr.String()
}

func TestMainPrintsTheLineAndEndsWithTheOutcomesStatus(t *testing.T) {
	code, stdout, stderr := outcomeOf([]string{"-n", "4"}, 0, nil)
	if code != 0 || !strings.Contains(stdout, "pkg: corobench/count\n") || !strings.Contains(stdout, "\t4 things\n") {
		t.Errorf("status %d, stdout %q", code, stdout)
	}
	if stderr != "count: counted\n" {
		t.Errorf("stderr %q; want the note alone", stderr)
	}
	code, stdout, stderr = outcomeOf(nil, 1, nil)
	if code != 1 || !strings.Contains(stdout, "\t3 things\n") || stderr != "count: counted\ncount: too few\n" {
		t.Errorf("a failed verdict: status %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}

func TestMainTellsABadCommandLineFromAFailedRun(t *testing.T) {
	if code, stdout, stderr := outcomeOf([]string{"-n", "0"}, 0, nil); code != 2 || stdout != "" ||
		stderr != "count: -n must be in 1..9, got 0\n" {
		t.Errorf("bad flag: status %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if code, stdout, _ := outcomeOf([]string{"-h"}, 0, nil); code != 0 || stdout != "" {
		t.Errorf("-h: status %d, stdout %q", code, stdout)
	}
	if code, stdout, stderr := outcomeOf(nil, 0, errors.New("no memory")); code != 1 || stdout != "" ||
		stderr != "count: no memory\n" {
		t.Errorf("failed run: status %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}
