package database

import (
	"context"
	"encoding/json"
	"net"
	"strings"
	"testing"

	"corobench/targets/go-common/contract"
)

func errorOf(t *testing.T, pool *Pool) (int, string) {
	t.Helper()
	response := pool.RandomWorld(context.Background())
	var body struct {
		Error string `json:"error"`
	}
	if err := json.Unmarshal(response.Body, &body); err != nil {
		t.Fatalf("body %s is not a JSON error: %v", response.Body, err)
	}
	return response.Status, body.Error
}

func TestNoDatabaseURLIs503(t *testing.T) {
	status, message := errorOf(t, New("", 4))
	if status != 503 || message != "database unavailable: no database: DATABASE_URL is not set" {
		t.Errorf("got %d %q", status, message)
	}
}

func TestMalformedDatabaseURLIs503NamingIt(t *testing.T) {
	status, message := errorOf(t, New("postgres://u@127.0.0.1:notaport/db", 4))
	if status != 503 || !strings.Contains(message, "DATABASE_URL is not a valid PostgreSQL URL") {
		t.Errorf("got %d %q", status, message)
	}
}

func TestUnreachableDatabaseIs503OnOneLine(t *testing.T) {
	// A port that was free a moment ago: nothing accepts connections there.
	probe, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "postgres://u@" + probe.Addr().String() + "/db"
	probe.Close()
	pool := New(url, 4)
	defer pool.Close()
	status, message := errorOf(t, pool)
	if status != 503 || !strings.Contains(message, "database unavailable: reading world row") ||
		strings.ContainsAny(message, "\n\t") {
		t.Errorf("got %d %q", status, message)
	}
}

func TestClosedPoolIsNeverCreated(t *testing.T) {
	pool := New("postgres://u@127.0.0.1:1/db", 4)
	pool.Close()
	status, message := errorOf(t, pool)
	if status != 503 || !strings.Contains(message, "stopping") || pool.pool != nil {
		t.Errorf("got %d %q", status, message)
	}
}

func TestSelectOneWithoutDatabaseIs503(t *testing.T) {
	response := New("", 4).SelectOne(context.Background())
	if response.Status != 503 || !strings.Contains(string(response.Body), "DATABASE_URL is not set") {
		t.Errorf("got %d %s", response.Status, response.Body)
	}
}

func TestStatsWithoutDatabaseIsAbsent(t *testing.T) {
	if stats := New("", 4).Stats(); stats != nil {
		t.Errorf("a target without a database reported a pool: %+v", stats)
	}
}

func TestStatsOfAnUnusedPoolAreItsSizeAndNoCounts(t *testing.T) {
	pool := New("postgres://u@127.0.0.1:1/db", 7)
	defer pool.Close()
	stats := pool.Stats()
	want := contract.PoolStats{Max: 7}
	if stats == nil || *stats != want {
		t.Errorf("got %+v, want %+v", stats, want)
	}
}

func TestFailedSelectOneCountsNoAcquire(t *testing.T) {
	pool := New("postgres://u@127.0.0.1:1/db", 2)
	defer pool.Close()
	response := pool.SelectOne(context.Background())
	if response.Status != 503 || !strings.Contains(string(response.Body), "SELECT 1") {
		t.Errorf("got %d %s", response.Status, response.Body)
	}
	if stats := pool.Stats(); stats == nil || stats.Acquires != 0 || stats.Open != 0 {
		t.Errorf("a refused connection was counted as acquired: %+v", stats)
	}
}
