package http1

import (
	"errors"
	"strings"
	"testing"
)

func TestParseReadsAHead(t *testing.T) {
	raw := "POST /up%6Coad?x=1&ms=5 HTTP/1.1\r\nHost: a\r\ncontent-length: 12\r\n" +
		"Connection: keep-alive, Close\r\nExpect: 100-continue\r\n\r\nbody"
	head, err := Parse([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	want := Head{Method: "POST", Path: "/upload", RawQuery: "x=1&ms=5", ContentLength: 12,
		KeepAlive: false, ExpectContinue: true, http11: true, Len: len(raw) - len("body")}
	if head != want {
		t.Errorf("Parse = %+v; want %+v", head, want)
	}
}

func TestParseKeepAliveRules(t *testing.T) {
	cases := map[string]bool{
		"GET / HTTP/1.1\r\nHost: a\r\n\r\n":                       true,
		"GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n":  false,
		"GET / HTTP/1.0\r\n\r\n":                                  false,
		"GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n":        true,
		"GET / HTTP/1.0\r\nConnection: keep-alive,close\r\n\r\n":  false,
		"\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\nX-Y:  z \t\r\n\r\n": true,
	}
	for raw, want := range cases {
		head, err := Parse([]byte(raw))
		if err != nil || head.KeepAlive != want || head.Len != len(raw) {
			t.Errorf("Parse(%q) = %+v, %v; want KeepAlive %v", raw, head, err, want)
		}
	}
}

func TestParseWaitsForAHeadSplitAcrossReads(t *testing.T) {
	raw := "GET /plaintext HTTP/1.1\r\nHost: x\r\nUser-Agent: test\r\n\r\n"
	for cut := 0; cut < len(raw); cut++ {
		if _, err := Parse([]byte(raw[:cut])); err != ErrIncomplete {
			t.Fatalf("Parse(%q) = %v; want ErrIncomplete", raw[:cut], err)
		}
	}
	if head, err := Parse([]byte(raw)); err != nil || head.Path != "/plaintext" {
		t.Errorf("Parse(whole) = %+v, %v", head, err)
	}
}

func TestParseRejects(t *testing.T) {
	cases := []struct {
		raw    string
		status int
		about  string
	}{
		{"garbage\r\n", 400, "request line"},
		{"\x16\x03\x01\x02\x00", 400, "method"},
		{"GET /\n\n", 400, "LF without CR"},
		{"GET / HTTP/1.1\r\nHost: a\nX: y\r\n\r\n", 400, "LF without CR"},
		{"GET  / HTTP/1.1\r\n", 400, "request line"},
		{"GET http://a/ HTTP/1.1\r\nHost: a\r\n\r\n", 400, "starting with /"},
		{"GET /a%zz HTTP/1.1\r\nHost: a\r\n\r\n", 400, "malformed escape"},
		{"GET / HTTP/2.0\r\n\r\n", 505, "not supported"},
		{"GET / FTP/1.1\r\n", 400, "request line"},
		{"GET / HTTP/1.1\r\n\r\n", 400, "Host"},
		{"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400, "Host"},
		{"GET / HTTP/1.1\r\nHost: a\r\n Folded\r\n\r\n", 400, "folded"},
		{"GET / HTTP/1.1\r\nHost: a\r\nNo colon here\r\n\r\n", 400, "header line"},
		{"GET / HTTP/1.1\r\nHost: a\r\nBad Name: v\r\n\r\n", 400, "header line"},
		{"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: -1\r\n\r\n", 400, "Content-Length"},
		{"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1x\r\n\r\n", 400, "Content-Length"},
		{"POST / HTTP/1.1\r\nHost: a\r\nContent-Length:\r\n\r\n", 400, "Content-Length"},
		{"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 99999999999999999999\r\n\r\n", 400, "Content-Length"},
		{"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", 400, "conflicting"},
		{"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n", 501, "Transfer-Encoding"},
		{"POST / HTTP/1.1\r\nHost: a\r\nExpect: magic\r\n\r\n", 417, "100-continue"},
		{"GET / HTTP/1.1\r\nHost: a\r\nX: a\x00b\r\n\r\n", 400, "control character"},
	}
	for _, c := range cases {
		_, err := Parse([]byte(c.raw))
		var refusal *Error
		if !errors.As(err, &refusal) || refusal.Status != c.status || !strings.Contains(refusal.Message, c.about) {
			t.Errorf("Parse(%q) = %v; want %d mentioning %q", c.raw, err, c.status, c.about)
		}
	}
}

func TestParseRefusesOversizedHeads(t *testing.T) {
	long := "GET / HTTP/1.1\r\nHost: a\r\nX-Pad: " + strings.Repeat("p", MaxHeadBytes) + "\r\n\r\n"
	unfinished := "GET / HTTP/1.1\r\nHost: a\r\nX-Pad: " + strings.Repeat("p", MaxHeadBytes)
	manyLines := "GET / HTTP/1.1\r\nHost: a\r\n" + strings.Repeat("X: y\r\n", maxHeaderLines) + "\r\n"
	blankLines := strings.Repeat("\r\n", MaxHeadBytes/2)
	for _, raw := range []string{long, unfinished, manyLines, blankLines} {
		_, err := Parse([]byte(raw))
		var refusal *Error
		if !errors.As(err, &refusal) || refusal.Status != 431 {
			t.Errorf("Parse(%d bytes) = %v; want 431", len(raw), err)
		}
	}
	fits := "GET / HTTP/1.1\r\nHost: a\r\n\r\n"
	padded := strings.Replace(fits, "a\r\n", "a\r\nX: "+strings.Repeat("p", MaxHeadBytes-len(fits)-5)+"\r\n", 1)
	if head, err := Parse([]byte(padded)); err != nil || head.Len != MaxHeadBytes {
		t.Errorf("a head of exactly %d bytes: %+v, %v", MaxHeadBytes, head, err)
	}
}
