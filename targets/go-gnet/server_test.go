package main

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/panjf2000/gnet/v2"

	"corobench/targets/go-common/database"
)

// startServer runs the gnet server in-process on a free loopback port.
func startServer(t *testing.T) (addr, uploadDir string) {
	t.Helper()
	probe, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr = probe.Addr().String()
	probe.Close()
	handler := &server{name: "go-gnet-test", dataDir: t.TempDir(), uploadDir: t.TempDir(),
		db: database.New("", 1), booted: make(chan gnet.Engine, 1)}
	stopped := make(chan error, 1)
	go func() {
		stopped <- gnet.Run(handler, "tcp://"+addr)
	}()
	var engine gnet.Engine
	select {
	case engine = <-handler.booted:
	case err := <-stopped:
		t.Fatalf("gnet did not start: %v", err)
	}
	t.Cleanup(func() {
		_ = engine.Stop(context.Background())
		<-stopped
	})
	return addr, handler.uploadDir
}

type client struct {
	t      *testing.T
	conn   net.Conn
	reader *bufio.Reader
}

func dial(t *testing.T, addr string) *client {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return &client{t: t, conn: conn, reader: bufio.NewReader(conn)}
}

func (c *client) send(raw string) {
	c.t.Helper()
	if _, err := io.WriteString(c.conn, raw); err != nil {
		c.t.Fatal(err)
	}
}

// read returns the next answer's status, whether it closes the
// connection, its Content-Type and its body. Final answers must carry
// Server and Date.
func (c *client) read() (status int, closes bool, contentType, body string) {
	c.t.Helper()
	return c.readFor(nil)
}

// readFor reads the answer to request (nil: a GET), which tells the reader
// whether a body follows.
func (c *client) readFor(request *http.Request) (status int, closes bool, contentType, body string) {
	c.t.Helper()
	response, err := http.ReadResponse(c.reader, request)
	if err != nil {
		c.t.Fatalf("reading an answer: %v", err)
	}
	defer response.Body.Close()
	read, err := io.ReadAll(response.Body)
	if err != nil {
		c.t.Fatal(err)
	}
	final := response.StatusCode >= 200
	if final && (response.Header.Get("Server") != "go-gnet-test" || response.Header.Get("Date") == "") {
		c.t.Errorf("answer %d lacks Server or Date: %v", response.StatusCode, response.Header)
	}
	return response.StatusCode, response.Close, response.Header.Get("Content-Type"), string(read)
}

// get is a pipelinable GET request for target.
func get(target string) string {
	return "GET " + target + " HTTP/1.1\r\nHost: x\r\n\r\n"
}

// expectClosed checks that the server closed the connection.
func (c *client) expectClosed() {
	c.t.Helper()
	if extra, err := c.reader.ReadByte(); err != io.EOF {
		c.t.Errorf("connection still open: read %q, %v", extra, err)
	}
}

func TestPipelinedAnswersKeepRequestOrder(t *testing.T) {
	addr, _ := startServer(t)
	c := dial(t, addr)
	c.send(get("/io?ms=150") + get("/plaintext") + get("/io?ms=0") + get("/mixed?iters=1&ms=0") + get("/json"))
	want := []string{
		`{"message":"Hello, World!","waited_ms":150}`,
		"Hello, World!",
		`{"message":"Hello, World!","waited_ms":0}`,
		`{"digest":"66687aadf862bd776c8fc18b8e9f8e20089714856ee233b3902a591d0d5f2925","iters":1,"waited_ms":0}`,
		`{"message":"Hello, World!"}`,
	}
	for i, body := range want {
		if status, _, _, got := c.read(); status != 200 || got != body {
			t.Errorf("answer %d = %d %s; want 200 %s", i, status, got, body)
		}
	}
}

func TestUploadArrivingInPiecesIsHashedWhole(t *testing.T) {
	addr, uploadDir := startServer(t)
	c := dial(t, addr)
	body := strings.Repeat("0123456789abcdef", 40_000)
	c.send("POST /upload HTTP/1.1\r\nHost: x\r\nContent-Le")
	c.send(fmt.Sprintf("ngth: %d\r\n\r\n%s", len(body), body[:100]))
	c.send(body[100:300_000])
	c.send(body[300_000:] + get("/plaintext"))
	sum := sha256.Sum256([]byte(body))
	want := fmt.Sprintf(`{"bytes":%d,"sha256":"%s"}`, len(body), hex.EncodeToString(sum[:]))
	if status, _, _, got := c.read(); status != 200 || got != want {
		t.Errorf("upload = %d %s; want 200 %s", status, got, want)
	}
	if status, _, _, got := c.read(); status != 200 || got != "Hello, World!" {
		t.Errorf("request after the upload = %d %s", status, got)
	}
	if entries, _ := os.ReadDir(uploadDir); len(entries) != 0 {
		t.Errorf("UPLOAD_DIR keeps %d files after the answer", len(entries))
	}
}

func TestExpectContinueGetsAnInterimAnswer(t *testing.T) {
	addr, _ := startServer(t)
	c := dial(t, addr)
	c.send("POST /upload HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\n")
	if status, _, _, _ := c.read(); status != http.StatusContinue {
		t.Fatalf("first answer %d; want 100", status)
	}
	c.send("abc")
	if status, _, _, got := c.read(); status != 200 || !strings.Contains(got, `"bytes":3`) {
		t.Errorf("upload = %d %s", status, got)
	}
}

func TestRefusalsCloseTheConnection(t *testing.T) {
	addr, _ := startServer(t)
	cases := []struct {
		raw    string
		status int
	}{
		{"GARBAGE\r\n\r\n", 400},
		{"GET /plaintext HTTP/1.1\r\nHost: x\r\nX-Pad: " + strings.Repeat("p", 9000) + "\r\n\r\n", 431},
		{fmt.Sprintf("POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n", 64<<20+1), 413},
		{"GET /json HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\nGET /json HTTP/1.1\r\nHost: x\r\n\r\n", 200},
		{"GET /json HTTP/1.0\r\n\r\n", 200},
	}
	for _, tc := range cases {
		c := dial(t, addr)
		c.send(tc.raw)
		status, closes, contentType, body := c.read()
		if status != tc.status || !closes {
			t.Errorf("%.40q = %d, closes %v, %s; want %d and close", tc.raw, status, closes, body, tc.status)
		}
		if status >= 400 && contentType != "application/json" {
			t.Errorf("%.40q: error answer is %q", tc.raw, contentType)
		}
		c.expectClosed()
	}
}

func TestWrongMethodAndUnknownPath(t *testing.T) {
	addr, _ := startServer(t)
	c := dial(t, addr)
	c.send("POST /plaintext HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\nbody" +
		get("/upload") + get("/nowhere") + get("/db"))
	for _, want := range []int{405, 405, 404, 503} {
		if status, _, _, body := c.read(); status != want {
			t.Errorf("got %d %s; want %d", status, body, want)
		}
	}
}

func TestHeadAnswerHasNoBody(t *testing.T) {
	addr, _ := startServer(t)
	c := dial(t, addr)
	c.send("HEAD /plaintext HTTP/1.1\r\nHost: x\r\n\r\n" + get("/plaintext"))
	if status, _, _, body := c.readFor(&http.Request{Method: http.MethodHead}); status != 405 || body != "" {
		t.Errorf("HEAD = %d %q; want 405 without a body", status, body)
	}
	if status, _, _, body := c.read(); status != 200 || body != "Hello, World!" {
		t.Errorf("GET after HEAD = %d %q; the HEAD answer broke the framing", status, body)
	}
}
