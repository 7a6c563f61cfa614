// Package programtest is what a program target's tests share: the units
// its target.toml declares, which its printed line must carry, and a
// reader of the lines it prints.
package programtest

import (
	"bytes"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"corobench/targets/go-common/benchline"
	"corobench/targets/go-common/program"
)

// Metrics reads [program].metrics from target.toml in the package's
// folder, failing the test when it cannot.
func Metrics(tb testing.TB) []string {
	tb.Helper()
	units, err := program.DeclaredMetrics("target.toml")
	if err != nil {
		tb.Fatal(err)
	}
	return units
}

// Line is one parsed result line of the benchmark format.
type Line struct {
	// Name is the benchmark's name without the GOMAXPROCS suffix.
	Name       string
	Procs      int
	Iterations int
	// Units are the line's units in the order printed.
	Units  []string
	Values map[string]float64
}

var benchName = regexp.MustCompile(`^(Benchmark[^\s]*)-(\d+)$`)

// ParseLine reads one result line as benchline.WriteLine prints it,
// failing the test on anything else, a unit printed twice included.
func ParseLine(tb testing.TB, line string) Line {
	tb.Helper()
	fields := strings.Fields(line)
	if len(fields) < 4 || len(fields)%2 != 0 {
		tb.Fatalf("%q: want a name, an iteration count and value/unit pairs", line)
	}
	name := benchName.FindStringSubmatch(fields[0])
	if name == nil {
		tb.Fatalf("%q: the name is not Benchmark...-<procs>", fields[0])
	}
	parsed := Line{Name: name[1], Values: map[string]float64{}}
	parsed.Procs, _ = strconv.Atoi(name[2])
	var err error
	if parsed.Iterations, err = strconv.Atoi(fields[1]); err != nil {
		tb.Fatalf("%q: iterations: %v", line, err)
	}
	for i := 2; i < len(fields); i += 2 {
		value, err := strconv.ParseFloat(fields[i], 64)
		if err != nil {
			tb.Fatalf("%q: value %q: %v", line, fields[i], err)
		}
		unit := fields[i+1]
		if _, seen := parsed.Values[unit]; seen {
			tb.Fatalf("%q: unit %s twice", line, unit)
		}
		parsed.Units = append(parsed.Units, unit)
		parsed.Values[unit] = value
	}
	return parsed
}

// CheckLine fails the test unless line (one result line as
// benchline.WriteLine prints it) starts with namePrefix, ran one iteration
// and carries ns/op and then target.toml's metrics, in that order.
func CheckLine(tb testing.TB, line, namePrefix string) {
	tb.Helper()
	parsed := ParseLine(tb, line)
	if !strings.HasPrefix(parsed.Name+"-", namePrefix) || parsed.Iterations != 1 {
		tb.Fatalf("%q: want the name %s… and one iteration", line, namePrefix)
	}
	checkUnits(tb, parsed)
}

// Output prints what the program of package pkg prints for one run (the
// header, then the line of name with metrics), fails the test unless that
// is four header lines and a line of one iteration carrying ns/op and
// then target.toml's metrics, and returns the line read back.
func Output(tb testing.TB, pkg, name string, metrics []benchline.Metric) Line {
	tb.Helper()
	var out bytes.Buffer
	benchline.WriteHeader(&out, pkg)
	benchline.WriteLine(&out, name, metrics)
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 5 {
		tb.Fatalf("output has %d lines; want 4 header lines and one result:\n%s", len(lines), out.String())
	}
	for i, key := range []string{"goos: ", "goarch: ", "pkg: " + pkg, "cpu: "} {
		if !strings.HasPrefix(lines[i], key) {
			tb.Errorf("header line %d = %q; want it to start with %q", i, lines[i], key)
		}
	}
	line := ParseLine(tb, lines[4])
	if line.Iterations != 1 || line.Procs < 1 {
		tb.Errorf("procs %d, iterations %d; want one iteration on at least one P", line.Procs, line.Iterations)
	}
	checkUnits(tb, line)
	return line
}

func checkUnits(tb testing.TB, line Line) {
	tb.Helper()
	if want := append([]string{"ns/op"}, Metrics(tb)...); !slices.Equal(line.Units, want) {
		tb.Errorf("units %v; want ns/op then target.toml's metrics %v", line.Units, want)
	}
}
