// Package program holds what every program target shares beyond its
// output line: its command line (flags, their ranges, no stray argument),
// its main (exit statuses, the line on stdout, notes on stderr) and the
// metrics its target.toml declares, which its tests compare with the line
// it prints.
package program

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
)

// IntRange is an integer flag's allowed values, inclusive.
type IntRange struct {
	Name     string
	Value    *int
	Min, Max int
}

// Int is the range of the flag name whose value is at value.
func Int(name string, value *int, minimum, maximum int) IntRange {
	return IntRange{Name: name, Value: value, Min: minimum, Max: maximum}
}

// CheckRanges returns an error naming the first flag whose value lies
// outside its range, and the range.
func CheckRanges(ranges []IntRange) error {
	for _, r := range ranges {
		if *r.Value < r.Min || *r.Value > r.Max {
			return fmt.Errorf("-%s must be in %d..%d, got %d", r.Name, r.Min, r.Max, *r.Value)
		}
	}
	return nil
}

// Parse reads a program's command line into the flags define registers
// on the flag set named name. Usage and errors go to stderr; a stray
// argument, or a value outside a range define returns, is an error.
// flag.ErrHelp comes back after -h.
func Parse(name string, args []string, stderr io.Writer, define func(*flag.FlagSet) []IntRange) error {
	flags := flag.NewFlagSet(name, flag.ContinueOnError)
	flags.SetOutput(stderr)
	ranges := define(flags)
	if err := flags.Parse(args); err != nil {
		return err
	}
	if flags.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", flags.Arg(0))
	}
	return CheckRanges(ranges)
}

var metricsLine = regexp.MustCompile(`(?m)^metrics = \[(.*)\]$`)

// DeclaredMetrics reads the `metrics = [...]` line of the [program] table
// of the manifest at path: the units every result line must carry, in
// order.
func DeclaredMetrics(path string) ([]string, error) {
	manifest, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return metrics(manifest)
}

func metrics(manifest []byte) ([]string, error) {
	match := metricsLine.FindSubmatch(manifest)
	if match == nil {
		return nil, errors.New("target.toml has no metrics = [...] line")
	}
	var units []string
	for _, quoted := range strings.Split(string(match[1]), ",") {
		unit, err := strconv.Unquote(strings.TrimSpace(quoted))
		if err != nil {
			return nil, fmt.Errorf("metrics entry %s: %w", quoted, err)
		}
		units = append(units, unit)
	}
	return units, nil
}
