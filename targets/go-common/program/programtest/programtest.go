// Package programtest is what a program target's tests share: the units
// its target.toml declares, which its printed line must carry.
package programtest

import (
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
