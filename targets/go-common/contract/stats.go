package contract

import (
	"bytes"
	"errors"
	"os"
	"runtime"
	"strconv"
)

// Stats is the body of GET /stats. Threads is nil when /proc cannot say;
// Pool is absent when the target has no database pool.
type Stats struct {
	Model     string     `json:"model"`
	Threads   *int       `json:"threads"`
	Tasks     int        `json:"tasks"`
	HeapBytes uint64     `json:"heap_bytes"`
	Pool      *PoolStats `json:"pool,omitempty"`
}

// PoolStats is the database pool's own account of itself (the optional
// `pool` object of /stats): its size now, and its counters since it was
// created, as the pool library keeps them.
type PoolStats struct {
	Max            int32 `json:"max"`
	Open           int32 `json:"open"`
	Idle           int32 `json:"idle"`
	Acquires       int64 `json:"acquires"`
	NewConnections int64 `json:"new_connections"`
	EmptyAcquires  int64 `json:"empty_acquires"`
	AcquireWaitUs  int64 `json:"acquire_wait_us"`
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
