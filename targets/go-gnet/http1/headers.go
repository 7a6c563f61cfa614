package http1

import (
	"bytes"
	"net/http"
)

// headerFacts collects what the server needs from the header lines.
type headerFacts struct {
	hosts             int
	contentLength     int64
	haveLength        bool
	connectionClose   bool
	connectionKeep    bool
	expectContinue    bool
	transferEncodings int
}

// readHeaders parses the header lines (each ending in CRLF) and applies
// them to the head.
func (h *Head) readHeaders(lines []byte) error {
	var facts headerFacts
	for count := 0; len(lines) > 0; count++ {
		if count == maxHeaderLines {
			return &Error{Status: http.StatusRequestHeaderFieldsTooLarge, Message: "request has more than 64 header lines"}
		}
		line, rest, _ := bytes.Cut(lines, crlf)
		lines = rest
		if err := facts.read(line); err != nil {
			return err
		}
	}
	return h.apply(facts)
}

func (f *headerFacts) read(line []byte) error {
	if line[0] == ' ' || line[0] == '\t' {
		return badRequest("folded header lines are not allowed")
	}
	name, value, found := bytes.Cut(line, []byte(":"))
	if !found || len(name) == 0 || !isToken(name) {
		return badRequest("malformed header line %q: want Name: value", truncate(line))
	}
	value = bytes.Trim(value, " \t")
	for _, c := range value {
		if c < ' ' && c != '\t' || c == 0x7f {
			return badRequest("header %s holds a control character", name)
		}
	}
	switch {
	case bytes.EqualFold(name, []byte("Host")):
		f.hosts++
	case bytes.EqualFold(name, []byte("Content-Length")):
		return f.readContentLength(value)
	case bytes.EqualFold(name, []byte("Transfer-Encoding")):
		f.transferEncodings++
	case bytes.EqualFold(name, []byte("Connection")):
		f.readConnection(value)
	case bytes.EqualFold(name, []byte("Expect")):
		if !bytes.EqualFold(value, []byte("100-continue")) {
			return &Error{Status: http.StatusExpectationFailed, Message: "only Expect: 100-continue is supported"}
		}
		f.expectContinue = true
	}
	return nil
}

func (f *headerFacts) readContentLength(value []byte) error {
	length, err := parseContentLength(value)
	if err != nil {
		return err
	}
	if f.haveLength && length != f.contentLength {
		return badRequest("conflicting Content-Length headers")
	}
	f.contentLength, f.haveLength = length, true
	return nil
}

func (f *headerFacts) readConnection(value []byte) {
	for option := range bytes.SplitSeq(value, []byte(",")) {
		option = bytes.Trim(option, " \t")
		f.connectionClose = f.connectionClose || bytes.EqualFold(option, []byte("close"))
		f.connectionKeep = f.connectionKeep || bytes.EqualFold(option, []byte("keep-alive"))
	}
}

func (h *Head) apply(f headerFacts) error {
	if f.transferEncodings > 0 {
		return &Error{Status: http.StatusNotImplemented,
			Message: "Transfer-Encoding request bodies are not supported; send Content-Length"}
	}
	if h.http11 && f.hosts != 1 {
		return badRequest("an HTTP/1.1 request needs exactly one Host header, got %d", f.hosts)
	}
	if h.http11 {
		h.KeepAlive = !f.connectionClose
	} else {
		h.KeepAlive = f.connectionKeep && !f.connectionClose
	}
	h.ContentLength = f.contentLength
	h.ExpectContinue = f.expectContinue
	return nil
}
