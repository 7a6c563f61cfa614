package contract

import (
	"encoding/json"
	"testing"
)

func TestThreadsFromStatus(t *testing.T) {
	status := []byte("Name:\tserver\nState:\tS (sleeping)\nThreads:\t7\nSigQ:\t0/95\n")
	if threads, err := ThreadsFromStatus(status); err != nil || threads != 7 {
		t.Errorf("ThreadsFromStatus = %d, %v; want 7", threads, err)
	}
	for _, bad := range []string{"Name:\tx\n", "Threads:\tmany\n", ""} {
		if _, err := ThreadsFromStatus([]byte(bad)); err == nil {
			t.Errorf("ThreadsFromStatus(%q) accepted a status without a valid Threads line", bad)
		}
	}
}

func TestStatsNowReportsThisProcess(t *testing.T) {
	response := StatsNow("event-loop", nil)
	var body struct {
		Model     string `json:"model"`
		Threads   int    `json:"threads"`
		Tasks     int    `json:"tasks"`
		HeapBytes uint64 `json:"heap_bytes"`
	}
	if err := json.Unmarshal(response.Body, &body); err != nil {
		t.Fatal(err)
	}
	if body.Model != "event-loop" || body.Threads < 1 || body.Tasks < 1 || body.HeapBytes == 0 {
		t.Errorf("/stats body %s is implausible", response.Body)
	}
}
