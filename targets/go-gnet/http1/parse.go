// Package http1 is the small HTTP/1.1 request reader the gnet target
// needs, since gnet hands it raw TCP bytes: it finds request heads,
// validates them strictly and frames Content-Length bodies, including
// pipelined requests. It does no I/O.
package http1

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
)

// MaxHeadBytes bounds a request head (request line, headers and the blank
// line); a longer head is answered 431.
const MaxHeadBytes = 8 << 10

// maxHeaderLines bounds the number of header lines, also answered 431.
const maxHeaderLines = 64

// Head is a parsed request head.
type Head struct {
	Method        string
	Path          string // percent-decoded, as net/http's URL.Path
	RawQuery      string // the part after '?', still encoded
	ContentLength int64  // 0 when absent
	// KeepAlive is false when the client asked to close the connection
	// (Connection: close, or HTTP/1.0 without Connection: keep-alive).
	KeepAlive      bool
	ExpectContinue bool
	http11         bool
	// Len is how many bytes of the buffer the head took, including blank
	// lines skipped before it.
	Len int
}

// ErrIncomplete means the buffer holds no complete head yet: read more.
var ErrIncomplete = errors.New("incomplete request head")

// Error is a request the server must refuse with Status, closing the
// connection afterwards since the framing of what follows is lost.
type Error struct {
	Status  int
	Message string
}

func (e *Error) Error() string { return e.Message }

func badRequest(format string, args ...any) *Error {
	return &Error{Status: http.StatusBadRequest, Message: fmt.Sprintf(format, args...)}
}

var (
	crlf     = []byte("\r\n")
	headEnd  = []byte("\r\n\r\n")
	errLarge = &Error{Status: http.StatusRequestHeaderFieldsTooLarge,
		Message: fmt.Sprintf("request head exceeds %d bytes", MaxHeadBytes)}
)

// Parse reads one request head from the start of buf. It returns
// ErrIncomplete when more bytes are needed, or an *Error as soon as the
// bytes at hand cannot start a valid request.
func Parse(buf []byte) (Head, error) {
	skipped := 0
	for bytes.HasPrefix(buf[skipped:], crlf) {
		skipped += len(crlf) // RFC 9112 §2.2: ignore blank lines before a request
	}
	rest := buf[skipped:]
	end := bytes.Index(rest, headEnd)
	if end < 0 {
		if len(buf) >= MaxHeadBytes {
			return Head{}, errLarge
		}
		return Head{}, incompleteOrError(rest)
	}
	if skipped+end+len(headEnd) > MaxHeadBytes {
		return Head{}, errLarge
	}
	if hasBareLF(rest[:end]) {
		return Head{}, badRequest("request head has a line ending in LF without CR")
	}
	lineEnd := bytes.Index(rest, crlf)
	head, err := parseRequestLine(rest[:lineEnd])
	if err != nil {
		return Head{}, err
	}
	if err := head.readHeaders(rest[lineEnd+len(crlf) : end+len(crlf)]); err != nil {
		return Head{}, err
	}
	head.Len = skipped + end + len(headEnd)
	return head, nil
}

// incompleteOrError rejects a partial head early when what has arrived is
// already wrong, so that garbage is answered at once instead of after a
// wait for a blank line that may never come.
func incompleteOrError(partial []byte) error {
	if hasBareLF(partial) {
		return badRequest("request head has a line ending in LF without CR")
	}
	if lineEnd := bytes.Index(partial, crlf); lineEnd >= 0 {
		if _, err := parseRequestLine(partial[:lineEnd]); err != nil {
			return err
		}
	} else if len(partial) > 0 && !isTokenChar(partial[0]) && partial[0] != '\r' {
		return badRequest("request line does not start with a method")
	}
	return ErrIncomplete
}

func hasBareLF(b []byte) bool {
	for i, c := range b {
		if c == '\n' && (i == 0 || b[i-1] != '\r') {
			return true
		}
	}
	return false
}

func parseRequestLine(line []byte) (Head, error) {
	method, rest, ok1 := bytes.Cut(line, []byte(" "))
	target, version, ok2 := bytes.Cut(rest, []byte(" "))
	if !ok1 || !ok2 || len(method) == 0 || !isToken(method) {
		return Head{}, badRequest("malformed request line %q: want METHOD SP /path SP HTTP/1.1", truncate(line))
	}
	head := Head{Method: string(method)}
	switch string(version) {
	case "HTTP/1.1":
		head.http11 = true
	case "HTTP/1.0":
	default:
		if len(version) == 8 && bytes.HasPrefix(version, []byte("HTTP/")) {
			return Head{}, &Error{Status: http.StatusHTTPVersionNotSupported,
				Message: fmt.Sprintf("HTTP version %q is not supported; use HTTP/1.1", version)}
		}
		return Head{}, badRequest("malformed request line %q: want METHOD SP /path SP HTTP/1.1", truncate(line))
	}
	if err := head.setTarget(target); err != nil {
		return Head{}, err
	}
	return head, nil
}

func (h *Head) setTarget(target []byte) error {
	if len(target) == 0 || target[0] != '/' {
		return badRequest("request target %q must be a path starting with /", truncate(target))
	}
	for _, c := range target {
		if c <= ' ' || c == 0x7f {
			return badRequest("request target %q holds a control character", truncate(target))
		}
	}
	rawPath, rawQuery, _ := bytes.Cut(target, []byte("?"))
	path, err := url.PathUnescape(string(rawPath))
	if err != nil {
		return badRequest("request path %q has a malformed escape", truncate(rawPath))
	}
	h.Path, h.RawQuery = path, string(rawQuery)
	return nil
}

func truncate(b []byte) []byte {
	const shown = 64
	if len(b) > shown {
		return b[:shown]
	}
	return b
}

// tokenChars marks the characters RFC 9110 allows in a token (method,
// header name).
var tokenChars = func() (table [256]bool) {
	for c := '0'; c <= '9'; c++ {
		table[c] = true
	}
	for c := 'a'; c <= 'z'; c++ {
		table[c], table[c-'a'+'A'] = true, true
	}
	for _, c := range "!#$%&'*+-.^_`|~" {
		table[c] = true
	}
	return table
}()

func isTokenChar(c byte) bool { return tokenChars[c] }

func isToken(b []byte) bool {
	for _, c := range b {
		if !tokenChars[c] {
			return false
		}
	}
	return true
}

func parseContentLength(value []byte) (int64, error) {
	for _, c := range value {
		if c < '0' || c > '9' {
			return 0, badRequest("Content-Length %q is not a non-negative integer", truncate(value))
		}
	}
	length, err := strconv.ParseInt(string(value), 10, 64)
	if err != nil || len(value) == 0 {
		return 0, badRequest("Content-Length %q is not a non-negative integer", truncate(value))
	}
	return length, nil
}
