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

// answer encodes response for request seq and queues it in order.
func (st *connState) answer(seq uint64, response contract.Response, keepAlive bool) {
	keepAlive = keepAlive && !response.Close
	head := http1.AppendHead(make([]byte, 0, 192), response, st.server.name, keepAlive)
	st.replies.finish(seq, reply{head: head, body: response.Body, last: !keepAlive})
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
	keepAlive := head.KeepAlive && readBody
	seq := st.replies.reserve()
	if rejected != nil {
		st.answer(seq, *rejected, keepAlive)
	} else {
		st.serve(seq, endpoint, head.RawQuery, keepAlive)
	}
	return readBody
}

func (st *connState) serve(seq uint64, endpoint contract.Endpoint, query string, keepAlive bool) {
	switch endpoint {
	case contract.EndpointHealthz:
		st.answer(seq, contract.Healthz(), keepAlive)
	case contract.EndpointPlaintext:
		st.answer(seq, contract.Plaintext(), keepAlive)
	case contract.EndpointJSON:
		st.answer(seq, contract.HelloJSON(), keepAlive)
	case contract.EndpointStats:
		st.answer(seq, contract.StatsNow(model), keepAlive)
	case contract.EndpointIO:
		st.waitIO(seq, query, keepAlive)
	case contract.EndpointMixed:
		st.mixed(seq, query, keepAlive)
	case contract.EndpointDB:
		st.handOff(seq, keepAlive, 0, func() contract.Response {
			return st.server.db.RandomWorld(context.Background())
		})
	case contract.EndpointFile:
		st.file(seq, query, keepAlive)
	}
}

// handOff runs work off the loop and answers request seq with its result:
// after a timer of delayMs when there is a wait (an event-loop timer, no
// goroutine sleeps), else at once on a new goroutine. The server counts
// handed-off requests so that a graceful stop can let them finish.
func (st *connState) handOff(seq uint64, keepAlive bool, delayMs int, work func() contract.Response) {
	st.server.inFlight.Add(1)
	run := func() {
		defer st.server.inFlight.Add(-1)
		st.answer(seq, work(), keepAlive)
	}
	if delayMs > 0 {
		time.AfterFunc(time.Duration(delayMs)*time.Millisecond, run)
	} else {
		go run()
	}
}

// waitIO answers from a timer: the loop never waits.
func (st *connState) waitIO(seq uint64, query string, keepAlive bool) {
	waitMs, err := contract.IOWaitMs.Parse(query)
	if err != nil {
		st.answer(seq, contract.BadParam(err), keepAlive)
		return
	}
	st.handOff(seq, keepAlive, waitMs, func() contract.Response {
		return contract.IOWaited(waitMs)
	})
}

// mixed computes the digest on the loop, which an event loop that does
// CPU work in its handlers really does (the contract calls this the
// model's truth), then waits on a timer.
func (st *connState) mixed(seq uint64, query string, keepAlive bool) {
	iters, err := contract.MixedIters.Parse(query)
	if err != nil {
		st.answer(seq, contract.BadParam(err), keepAlive)
		return
	}
	waitMs, err := contract.MixedWaitMs.Parse(query)
	if err != nil {
		st.answer(seq, contract.BadParam(err), keepAlive)
		return
	}
	digest := contract.ChainDigest(iters)
	st.handOff(seq, keepAlive, waitMs, func() contract.Response {
		return contract.MixedDone(digest, iters, waitMs)
	})
}

// file reads payload.bin on a goroutine: a disk read may block.
func (st *connState) file(seq uint64, query string, keepAlive bool) {
	kb, err := contract.FileKB.Parse(query)
	if err != nil {
		st.answer(seq, contract.BadParam(err), keepAlive)
		return
	}
	st.handOff(seq, keepAlive, 0, func() contract.Response {
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
	st.answer(st.replies.reserve(), contract.Error(err.Status, "%s", err.Message), false)
}

// closed is called by the loop when the connection is gone.
func (st *connState) closed() {
	if st.upload != nil {
		st.upload.abort()
		st.upload = nil
	}
}
