// Package benchline prints a program target's figures the way
// `go test -bench` prints them, so corobench and benchstat read them alike.
package benchline

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"strings"
)

// Metric is one value/unit pair of a benchmark line.
type Metric struct {
	Value float64
	Unit  string
}

// WriteHeader prints the configuration lines `go test -bench` prints
// before its results, so benchstat groups this program's lines like a
// benchmark's.
func WriteHeader(w io.Writer, pkg string) {
	fmt.Fprintf(w, "goos: %s\ngoarch: %s\npkg: %s\ncpu: %s\n", runtime.GOOS, runtime.GOARCH, pkg, cpuName())
}

// WriteLine prints one result in the benchmark format: the name with its
// GOMAXPROCS suffix, the iteration count (one run is one iteration), then
// value/unit pairs in the given order.
func WriteLine(w io.Writer, name string, metrics []Metric) {
	var line strings.Builder
	fmt.Fprintf(&line, "%s-%d\t%8d", name, runtime.GOMAXPROCS(0), 1)
	for _, m := range metrics {
		line.WriteByte('\t')
		line.WriteString(FormatValue(m.Value))
		line.WriteByte(' ')
		line.WriteString(m.Unit)
	}
	line.WriteByte('\n')
	_, _ = io.WriteString(w, line.String())
}

// FormatValue prints a whole number (a count) as an integer and any other
// value with about as many significant digits as the testing package
// prints for a metric, without its column padding.
func FormatValue(x float64) string {
	switch y := math.Abs(x); {
	case x == math.Trunc(x) && y < 1e15, y >= 999.95:
		return fmt.Sprintf("%.0f", x)
	case y >= 99.995:
		return fmt.Sprintf("%.1f", x)
	case y >= 9.9995:
		return fmt.Sprintf("%.2f", x)
	case y >= 0.99995:
		return fmt.Sprintf("%.3f", x)
	case y >= 0.099995:
		return fmt.Sprintf("%.4f", x)
	case y >= 0.0099995:
		return fmt.Sprintf("%.5f", x)
	default:
		return fmt.Sprintf("%.6f", x)
	}
}

// cpuName is the first "model name" of /proc/cpuinfo, or "unknown".
func cpuName() string {
	file, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return "unknown"
	}
	defer file.Close()
	scanner := bufio.NewScanner(file)
	for scanner.Scan() {
		key, value, found := strings.Cut(scanner.Text(), ":")
		if found && strings.TrimSpace(key) == "model name" {
			return strings.TrimSpace(value)
		}
	}
	return "unknown"
}
