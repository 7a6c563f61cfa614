// Package programtest is what a program target's tests share: the units
// its target.toml declares, which its printed line must carry.
package programtest

import (
	"slices"
	"strings"
	"testing"

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

// CheckLine fails the test unless line (one result line as
// benchline.WriteLine prints it) starts with namePrefix, ran one iteration
// and carries ns/op and then target.toml's metrics, in that order.
func CheckLine(tb testing.TB, line, namePrefix string) {
	tb.Helper()
	fields := strings.Fields(line)
	if len(fields) < 2 || !strings.HasPrefix(fields[0], namePrefix) || fields[1] != "1" {
		tb.Fatalf("%q: want the name %s… and one iteration", line, namePrefix)
	}
	var units []string
	for i := 3; i < len(fields); i += 2 {
		units = append(units, fields[i])
	}
	if want := append([]string{"ns/op"}, Metrics(tb)...); !slices.Equal(units, want) {
		tb.Errorf("units %v; want ns/op then target.toml's metrics %v", units, want)
	}
}
