package program

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"corobench/targets/go-common/benchline"
)

// Outcome is what one run of a program prints and how it ends.
type Outcome struct {
	// Name is the benchmark line's name, without the GOMAXPROCS suffix.
	Name    string
	Metrics []benchline.Metric
	// Notes are lines for stderr that explain the figures.
	Notes []string
	// Status is the exit status once the line is printed: 0, or the
	// status of a run whose figures are not a measurement, and Reason why.
	Status int
	Reason string
}

// Main is a program's main: it parses the command line with parse (exit
// status 2 on a bad one, 0 after -h), runs (1 when the run fails), writes
// the notes to stderr and the benchmark header and line of package pkg to
// stdout, then exits with the outcome's status. Every message on stderr
// starts with name.
func Main[C any](name, pkg string, parse func([]string, io.Writer) (C, error), run func(C) (Outcome, error)) {
	if status := execute(name, pkg, os.Args[1:], os.Stdout, os.Stderr, parse, run); status != 0 {
		os.Exit(status)
	}
}

// execute is Main with its arguments and streams given; it returns the
// exit status.
func execute[C any](name, pkg string, args []string, stdout, stderr io.Writer,
	parse func([]string, io.Writer) (C, error), run func(C) (Outcome, error)) int {
	cfg, err := parse(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return 2
	}
	outcome, err := run(cfg)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return 1
	}
	for _, note := range outcome.Notes {
		fmt.Fprintf(stderr, "%s: %s\n", name, note)
	}
	benchline.WriteHeader(stdout, pkg)
	benchline.WriteLine(stdout, outcome.Name, outcome.Metrics)
	if outcome.Status != 0 {
		fmt.Fprintf(stderr, "%s: %s\n", name, outcome.Reason)
	}
	return outcome.Status
}
