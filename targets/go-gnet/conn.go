package main

import (
	"context"
	"net/http"
	"time"

	"github.com/panjf2000/gnet/v2"

	"corobench/targets/go-common/contract"
	"corobench/targets/go-gnet/http1"
)

// A body this small on a request that takes none is read and dropped; a
// larger one is not read at all: the answer closes the connection.
const maxIgnoredBodyBytes = 64 << 10

// connState is one connection, touched only by its event loop except for
// the reply queue, which goroutines finishing handed-off work share.
type connState struct {
	server  *server
	framer  http1.Framer
	replies replyQueue
	upload  *uploadStream // the /upload whose body is arriving, if any
}

func newConnState(s *server, c gnet.Conn) *connState {
	return &connState{server: s, replies: replyQueue{conn: c}}
}

// slot is where a request's answer goes: its place in the connection's
// order, whether the connection stays open after it, and whether the
// answer has no body (HEAD).
type slot struct {
	seq       uint64
	keepAlive bool
	headOnly  bool
}

// answer encodes response for a request and queues it in order.
func (st *connState) answer(to slot, response contract.Response) {
	keepAlive := to.keepAlive && !response.Close
	head := http1.AppendHead(make([]byte, 0, 192), response, st.server.name, keepAlive)
	body := response.Body
	if to.headOnly {
		body = nil // Content-Length still tells the body's length, as HEAD requires
	}
	st.replies.finish(to.seq, reply{head: head, body: body, last: !keepAlive})
}

// Head dispatches one request and says whether to read its body. Cheap
// endpoints answer on the loop; waits, the database, file reads and
// uploads are handed to goroutines (timers for waits), which answer
// through the reply queue.
func (st *connState) Head(head http1.Head) (readBody bool) {
	endpoint, rejected := contract.Resolve(head.Method, head.Path)
	if endpoint == contract.EndpointUpload {
		return st.startUpload(head)
	}
	readBody = head.ContentLength <= maxIgnoredBodyBytes
	to := slot{seq: st.replies.reserve(), keepAlive: head.KeepAlive && readBody, headOnly: head.Method == http.MethodHead}
	if rejected != nil {
		st.answer(to, *rejected)
	} else {
		st.serve(to, endpoint, head.RawQuery)
	}
	return readBody
}

func (st *connState) serve(to slot, endpoint contract.Endpoint, query string) {
	switch endpoint {
	case contract.EndpointHealthz:
		st.answer(to, contract.Healthz())
	case contract.EndpointPlaintext:
		st.answer(to, contract.Plaintext())
	case contract.EndpointJSON:
		st.answer(to, contract.HelloJSON())
	case contract.EndpointStats:
		st.answer(to, contract.StatsNow(model, st.server.db.Stats()))
	case contract.EndpointIO:
		st.waitIO(to, query)
	case contract.EndpointMixed:
		st.mixed(to, query)
	case contract.EndpointDB:
		st.handOff(to, 0, func() contract.Response {
			return st.server.db.RandomWorld(context.Background())
		})
	case contract.EndpointSelect1:
		st.handOff(to, 0, func() contract.Response {
			return st.server.db.SelectOne(context.Background())
		})
	case contract.EndpointFile:
		st.file(to, query)
	}
}

// handOff runs work off the loop and answers the request with its result:
// after a timer of delayMs when there is a wait (an event-loop timer, no
// goroutine sleeps), else at once on a new goroutine. The server counts
// handed-off requests so that a graceful stop can let them finish.
func (st *connState) handOff(to slot, delayMs int, work func() contract.Response) {
	st.server.inFlight.Add(1)
	run := func() {
		defer st.server.inFlight.Add(-1)
		st.answer(to, work())
	}
	if delayMs > 0 {
		time.AfterFunc(time.Duration(delayMs)*time.Millisecond, run)
	} else {
		go run()
	}
}

// waitIO answers from a timer: the loop never waits.
func (st *connState) waitIO(to slot, query string) {
	waitMs, err := contract.IOWaitMs.Parse(query)
	if err != nil {
		st.answer(to, contract.BadParam(err))
		return
	}
	st.handOff(to, waitMs, func() contract.Response {
		return contract.IOWaited(waitMs)
	})
}

// mixed computes the digest on the loop, which an event loop that does
// CPU work in its handlers really does (the contract calls this the
// model's truth), then waits on a timer.
func (st *connState) mixed(to slot, query string) {
	iters, err := contract.MixedIters.Parse(query)
	if err != nil {
		st.answer(to, contract.BadParam(err))
		return
	}
	waitMs, err := contract.MixedWaitMs.Parse(query)
	if err != nil {
		st.answer(to, contract.BadParam(err))
		return
	}
	digest := contract.ChainDigest(iters)
	st.handOff(to, waitMs, func() contract.Response {
		return contract.MixedDone(digest, iters, waitMs)
	})
}

// file reads payload.bin on a goroutine: a disk read may block.
func (st *connState) file(to slot, query string) {
	kb, err := contract.FileKB.Parse(query)
	if err != nil {
		st.answer(to, contract.BadParam(err))
		return
	}
	st.handOff(to, 0, func() contract.Response {
		payload, err := contract.ReadPayload(st.server.dataDir, kb)
		if err != nil {
			return contract.Error(http.StatusInternalServerError, "%v", err)
		}
		return contract.Payload(payload)
	})
}

// Body passes a piece of an upload on to its goroutine; the body of any
// other request is dropped.
func (st *connState) Body(piece []byte) {
	if st.upload != nil {
		st.upload.push(piece)
	}
}

// BodyEnd tells the upload's goroutine that the whole body has arrived.
func (st *connState) BodyEnd() {
	if st.upload != nil {
		st.upload.end()
		st.upload = nil
	}
}

// Reject answers a request that cannot be read, then closes.
func (st *connState) Reject(err *http1.Error) {
	st.answer(slot{seq: st.replies.reserve()}, contract.Error(err.Status, "%s", err.Message))
}

// closed is called by the loop when the connection is gone.
func (st *connState) closed() {
	if st.upload != nil {
		st.upload.abort()
		st.upload = nil
	}
}
