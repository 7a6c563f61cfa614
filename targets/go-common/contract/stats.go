package contract

import (
	"bytes"
	"errors"
	"os"
	"runtime"
	"strconv"
)

// Stats is the body of GET /stats. Threads is nil when /proc cannot say.
type Stats struct {
	Model     string `json:"model"`
	Threads   *int   `json:"threads"`
	Tasks     int    `json:"tasks"`
	HeapBytes uint64 `json:"heap_bytes"`
}

// CurrentStats samples this process: OS threads from /proc/self/status,
// live goroutines (the Go unit of concurrency) and heap bytes in use.
// ReadMemStats briefly stops the world; corobench reads /stats only three
// times per trial, so that cost stays out of the measurement.
func CurrentStats(model string) Stats {
	stats := Stats{Model: model, Tasks: runtime.NumGoroutine()}
	if status, err := os.ReadFile("/proc/self/status"); err == nil {
		if threads, err := ThreadsFromStatus(status); err == nil {
			stats.Threads = &threads
		}
	}
	var mem runtime.MemStats
	runtime.ReadMemStats(&mem)
	stats.HeapBytes = mem.HeapAlloc
	return stats
}

var errNoThreadsLine = errors.New("no valid Threads: line in /proc/self/status")

// ThreadsFromStatus reads the "Threads:" line of a /proc/<pid>/status file.
func ThreadsFromStatus(status []byte) (int, error) {
	for line := range bytes.Lines(status) {
		rest, found := bytes.CutPrefix(line, []byte("Threads:"))
		if !found {
			continue
		}
		threads, err := strconv.Atoi(string(bytes.TrimSpace(rest)))
		if err != nil {
			return 0, errNoThreadsLine
		}
		return threads, nil
	}
	return 0, errNoThreadsLine
}
