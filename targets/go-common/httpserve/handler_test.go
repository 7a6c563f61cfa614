package httpserve

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"corobench/targets/go-common/contract"
	"corobench/targets/go-common/database"
)

func newTestServer(t *testing.T) *httptest.Server {
	t.Helper()
	handler := &Handler{
		Config: contract.Config{Name: "go-test", DataDir: t.TempDir(), UploadDir: t.TempDir()},
		Model:  "goroutine-per-connection",
		DB:     database.New("", 1),
	}
	server := httptest.NewServer(handler)
	t.Cleanup(server.Close)
	return server
}

func send(t *testing.T, method, url, body string) (*http.Response, string) {
	t.Helper()
	request, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	response, err := http.DefaultClient.Do(request)
	if err != nil {
		t.Fatal(err)
	}
	defer response.Body.Close()
	read, err := io.ReadAll(response.Body)
	if err != nil {
		t.Fatal(err)
	}
	return response, string(read)
}

func TestEveryAnswerCarriesTheContractHeaders(t *testing.T) {
	server := newTestServer(t)
	cases := []struct {
		method, path string
		status       int
		contentType  string
		body         string
	}{
		{"GET", "/plaintext", 200, contract.TextPlain, "Hello, World!"},
		{"GET", "/json", 200, contract.ApplicationJSON, `{"message":"Hello, World!"}`},
		{"GET", "/io?ms=0", 200, contract.ApplicationJSON, `{"message":"Hello, World!","waited_ms":0}`},
		{"GET", "/io?ms=x", 400, contract.ApplicationJSON, `{"error":"ms must be an integer in 0..=10000"}`},
		{"GET", "/missing", 404, contract.ApplicationJSON, `{"error":"no endpoint at path \"/missing\""}`},
		{"POST", "/plaintext", 405, contract.ApplicationJSON, `{"error":"method POST is not allowed on /plaintext; use GET"}`},
		{"GET", "/db", 503, contract.ApplicationJSON, `{"error":"database unavailable: no database: DATABASE_URL is not set"}`},
		{"GET", "/select1", 503, contract.ApplicationJSON, `{"error":"database unavailable: no database: DATABASE_URL is not set"}`},
		{"POST", "/select1", 405, contract.ApplicationJSON, `{"error":"method POST is not allowed on /select1; use GET"}`},
		{"POST", "/upload", 200, contract.ApplicationJSON,
			`{"bytes":3,"sha256":"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"}`},
	}
	for _, c := range cases {
		response, body := send(t, c.method, server.URL+c.path, "abc")
		header := response.Header
		if response.StatusCode != c.status || body != c.body || header.Get("Content-Type") != c.contentType {
			t.Errorf("%s %s = %d %q %s; want %d %q %s", c.method, c.path,
				response.StatusCode, header.Get("Content-Type"), body, c.status, c.contentType, c.body)
		}
		if header.Get("Server") != "go-test" || header.Get("Date") == "" || response.ContentLength != int64(len(body)) {
			t.Errorf("%s %s: Server %q, Date %q, Content-Length %d", c.method, c.path,
				header.Get("Server"), header.Get("Date"), response.ContentLength)
		}
	}
}

func TestOversizedUploadIsRefusedUnread(t *testing.T) {
	server := newTestServer(t)
	conn, err := net.Dial("tcp", server.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// Only the head is sent: a server that waited for the body would never
	// answer.
	head := fmt.Sprintf("POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n", contract.MaxUploadBytes+1)
	if _, err := conn.Write([]byte(head)); err != nil {
		t.Fatal(err)
	}
	response, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer response.Body.Close()
	if response.StatusCode != http.StatusRequestEntityTooLarge || response.Header.Get("Server") != "go-test" {
		t.Errorf("oversized upload = %d, Server %q; want 413, go-test", response.StatusCode, response.Header.Get("Server"))
	}
}

func TestFileServesThePayload(t *testing.T) {
	server := newTestServer(t)
	handler := server.Config.Handler.(*Handler)
	content := make([]byte, 4096)
	for i := range content {
		content[i] = byte(i % contract.PayloadModulus)
	}
	if err := os.WriteFile(handler.Config.DataDir+"/payload.bin", content, 0o644); err != nil {
		t.Fatal(err)
	}
	response, body := send(t, "GET", server.URL+"/file?kb=2", "")
	if response.StatusCode != 200 || body != string(content[:2048]) {
		t.Errorf("/file?kb=2 = %d with %d bytes", response.StatusCode, len(body))
	}
}

func TestStatsCarriesThePoolOnlyWhereThereIsOne(t *testing.T) {
	_, without := send(t, "GET", newTestServer(t).URL+"/stats", "")
	if strings.Contains(without, `"pool"`) {
		t.Errorf("/stats without a database reported a pool: %s", without)
	}
	handler := &Handler{Model: "goroutine-per-connection", DB: database.New("postgres://u@127.0.0.1:1/db", 3)}
	t.Cleanup(handler.DB.Close)
	server := httptest.NewServer(handler)
	t.Cleanup(server.Close)
	_, with := send(t, "GET", server.URL+"/stats", "")
	want := `"pool":{"max":3,"open":0,"idle":0,"acquires":0,"new_connections":0,"empty_acquires":0,"acquire_wait_us":0}`
	if !strings.Contains(with, want) {
		t.Errorf("/stats = %s; want it to contain %s", with, want)
	}
}
