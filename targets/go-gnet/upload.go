package main

import (
	"net/http"
	"sync"

	"corobench/targets/go-common/contract"
	"corobench/targets/go-gnet/http1"
)

// startUpload begins POST /upload: a goroutine writes the body to a
// temporary file as the loop receives it, so neither the loop nor memory
// ever holds the whole body, and the loop never waits on the disk.
func (st *connState) startUpload(head http1.Head) (readBody bool) {
	if head.ContentLength > contract.MaxUploadBytes {
		st.answer(slot{seq: st.replies.reserve()}, contract.UploadTooLarge(head.ContentLength))
		return false
	}
	if head.ExpectContinue {
		// The interim answer takes its own place in the order, so it
		// cannot overtake answers to earlier pipelined requests.
		st.replies.finish(st.replies.reserve(), reply{head: http1.Continue})
	}
	to := slot{seq: st.replies.reserve(), keepAlive: head.KeepAlive}
	stream := newUploadStream()
	st.upload = stream
	st.server.inFlight.Add(1)
	go func() {
		defer st.server.inFlight.Add(-1)
		response, aborted := stream.receive(st.server.uploadDir)
		if !aborted {
			st.answer(to, response)
		}
	}()
	return true
}

// uploadStream carries body pieces from the loop to the upload's
// goroutine. gnet cannot pause reading a connection, so the loop never
// waits here: pieces queue until the goroutine takes them. What can queue
// is bounded by the 64 MiB body limit and, in practice, by how far a disk
// write to the page cache falls behind loopback reads.
type uploadStream struct {
	mu      sync.Mutex
	ready   *sync.Cond
	pieces  [][]byte
	ended   bool
	aborted bool
}

func newUploadStream() *uploadStream {
	u := &uploadStream{}
	u.ready = sync.NewCond(&u.mu)
	return u
}

// push queues a copy of a body piece (the loop reuses its read buffer).
func (u *uploadStream) push(piece []byte) {
	owned := append([]byte(nil), piece...)
	u.mu.Lock()
	u.pieces = append(u.pieces, owned)
	u.mu.Unlock()
	u.ready.Signal()
}

func (u *uploadStream) end()   { u.finishWith(func() { u.ended = true }) }
func (u *uploadStream) abort() { u.finishWith(func() { u.aborted = true }) }

func (u *uploadStream) finishWith(mark func()) {
	u.mu.Lock()
	mark()
	u.mu.Unlock()
	u.ready.Signal()
}

// takeAll waits for pieces, the end of the body or an abort.
func (u *uploadStream) takeAll() (pieces [][]byte, ended, aborted bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	for len(u.pieces) == 0 && !u.ended && !u.aborted {
		u.ready.Wait()
	}
	pieces, u.pieces = u.pieces, nil
	return pieces, u.ended, u.aborted
}

// receive writes the body into a new sink and returns the answer. The
// body is drained even when the file cannot be written, so the requests
// pipelined behind it keep their framing.
func (u *uploadStream) receive(uploadDir string) (response contract.Response, aborted bool) {
	sink, failure := contract.NewUploadSink(uploadDir)
	for {
		pieces, ended, gone := u.takeAll()
		if gone {
			if sink != nil {
				sink.Abort()
			}
			return contract.Response{}, true
		}
		for _, piece := range pieces {
			if failure == nil {
				_, failure = sink.Write(piece)
			}
		}
		if ended {
			break
		}
	}
	if failure != nil {
		if sink != nil {
			sink.Abort()
		}
		return contract.Error(http.StatusInternalServerError, "%v", failure), false
	}
	result, err := sink.Finish()
	if err != nil {
		return contract.Error(http.StatusInternalServerError, "%v", err), false
	}
	return contract.JSON(http.StatusOK, result), false
}
