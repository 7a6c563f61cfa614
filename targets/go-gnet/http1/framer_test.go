package http1

import (
	"fmt"
	"strings"
	"testing"
)

// recorder writes down what a Framer reports, one line per event.
type recorder struct {
	events []string
	stopAt string // path whose head stops the framer
}

func (r *recorder) Head(head Head) bool {
	r.events = append(r.events, fmt.Sprintf("head %s %s len=%d keep=%v", head.Method, head.Path, head.ContentLength, head.KeepAlive))
	return head.Path != r.stopAt
}

func (r *recorder) Body(piece []byte) { r.events = append(r.events, "body "+string(piece)) }
func (r *recorder) BodyEnd()          { r.events = append(r.events, "end") }
func (r *recorder) Reject(err *Error) {
	r.events = append(r.events, fmt.Sprintf("reject %d", err.Status))
}

func (r *recorder) joined() string { return strings.Join(r.events, " | ") }

func feedInPieces(framer *Framer, receiver Receiver, raw string, size int) {
	for start := 0; start < len(raw); start += size {
		piece := []byte(raw[start:min(start+size, len(raw))])
		framer.Feed(piece, receiver)
		clear(piece) // the framer must not keep the caller's buffer
	}
}

func TestFramerAnswersPipelinedRequestsInOrder(t *testing.T) {
	raw := "GET /plaintext HTTP/1.1\r\nHost: x\r\n\r\n" +
		"POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello" +
		"GET /json HTTP/1.1\r\nHost: x\r\n\r\n"
	var framer Framer
	got := &recorder{}
	framer.Feed([]byte(raw), got)
	want := "head GET /plaintext len=0 keep=true | end | head POST /upload len=5 keep=true | " +
		"body hello | end | head GET /json len=0 keep=true | end"
	if got.joined() != want {
		t.Errorf("events:\n%s\nwant:\n%s", got.joined(), want)
	}
}

func TestFramerJoinsHeadsAndBodiesAcrossReads(t *testing.T) {
	raw := "POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n0123456789" +
		"GET /json HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
	for _, size := range []int{1, 2, 3, 7, 16, 50} {
		var framer Framer
		got := &recorder{}
		feedInPieces(&framer, got, raw, size)
		var body strings.Builder
		var rest []string
		for _, event := range got.events {
			if piece, isBody := strings.CutPrefix(event, "body "); isBody {
				body.WriteString(piece)
			} else {
				rest = append(rest, event)
			}
		}
		want := "head POST /upload len=10 keep=true | end | head GET /json len=0 keep=false | end"
		if body.String() != "0123456789" || strings.Join(rest, " | ") != want {
			t.Errorf("pieces of %d: body %q, events %q", size, body.String(), rest)
		}
	}
}

func TestFramerStopsWhenTheReceiverSaysSo(t *testing.T) {
	raw := "POST /big HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nxx" +
		"GET /json HTTP/1.1\r\nHost: x\r\n\r\n"
	var framer Framer
	got := &recorder{stopAt: "/big"}
	framer.Feed([]byte(raw), got)
	framer.Feed([]byte("more"), got)
	if got.joined() != "head POST /big len=100 keep=true" || !framer.Stopped() {
		t.Errorf("events %q, stopped %v", got.joined(), framer.Stopped())
	}
}

func TestFramerStopsAfterTheBodyOfAClosingRequest(t *testing.T) {
	raw := "POST /upload HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 2\r\n\r\nab" +
		"GET /json HTTP/1.1\r\nHost: x\r\n\r\n"
	var framer Framer
	got := &recorder{}
	framer.Feed([]byte(raw), got)
	if got.joined() != "head POST /upload len=2 keep=false | body ab | end" || !framer.Stopped() {
		t.Errorf("events %q, stopped %v", got.joined(), framer.Stopped())
	}
}

func TestFramerRejectsGarbageAfterAGoodRequest(t *testing.T) {
	var framer Framer
	got := &recorder{}
	framer.Feed([]byte("GET /json HTTP/1.1\r\nHost: x\r\n\r\nHELLO THERE\r\n"), got)
	framer.Feed([]byte("GET /json HTTP/1.1\r\nHost: x\r\n\r\n"), got)
	if got.joined() != "head GET /json len=0 keep=true | end | reject 400" {
		t.Errorf("events %q", got.joined())
	}
}

func TestFramerRejectsAnOversizedHeadArrivingSlowly(t *testing.T) {
	var framer Framer
	got := &recorder{}
	raw := "GET / HTTP/1.1\r\nHost: a\r\nX-Pad: " + strings.Repeat("p", 2*MaxHeadBytes)
	feedInPieces(&framer, got, raw, 1000)
	if got.joined() != "reject 431" || cap(framer.carry) > 4*MaxHeadBytes {
		t.Errorf("events %q, carry capacity %d", got.joined(), cap(framer.carry))
	}
}
