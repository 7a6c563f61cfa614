package program

import (
	"slices"
	"testing"
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
