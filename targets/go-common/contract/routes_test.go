package contract

import (
	"net/http"
	"testing"
	"time"
)

func TestResolve(t *testing.T) {
	cases := []struct {
		method, path string
		endpoint     Endpoint
		status       int
	}{
		{"GET", "/plaintext", EndpointPlaintext, 0},
		{"POST", "/upload", EndpointUpload, 0},
		{"GET", "/stats", EndpointStats, 0},
		{"GET", "/nope", EndpointUnknown, http.StatusNotFound},
		{"GET", "/plaintext/", EndpointUnknown, http.StatusNotFound},
		{"POST", "/plaintext", EndpointUnknown, http.StatusMethodNotAllowed},
		{"GET", "/upload", EndpointUnknown, http.StatusMethodNotAllowed},
	}
	for _, c := range cases {
		endpoint, rejected := Resolve(c.method, c.path)
		status := 0
		if rejected != nil {
			status = rejected.Status
			if rejected.ContentType != ApplicationJSON {
				t.Errorf("%s %s: error content type %q", c.method, c.path, rejected.ContentType)
			}
		}
		if endpoint != c.endpoint || status != c.status {
			t.Errorf("Resolve(%s %s) = %v, %d; want %v, %d", c.method, c.path, endpoint, status, c.endpoint, c.status)
		}
	}
	if _, rejected := Resolve("GET", "/upload"); rejected.Allow != "POST" {
		t.Errorf("405 on /upload allows %q; want POST", rejected.Allow)
	}
}

func TestHTTPDateIsIMFFixdate(t *testing.T) {
	date := HTTPDate()
	parsed, err := time.Parse(http.TimeFormat, date)
	if err != nil {
		t.Fatalf("HTTPDate() = %q is not IMF-fixdate: %v", date, err)
	}
	if skew := time.Since(parsed); skew < -5*time.Second || skew > 5*time.Second {
		t.Errorf("HTTPDate() = %q is %s away from now", date, skew)
	}
}
