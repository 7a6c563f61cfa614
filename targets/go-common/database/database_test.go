package database

import (
	"context"
	"encoding/json"
	"net"
	"strings"
	"testing"
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
