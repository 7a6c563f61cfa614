package http1

// Receiver gets, in stream order, what a Framer finds in a connection's
// bytes.
type Receiver interface {
	// Head is called for each request head. Returning false stops the
	// framer before the body: nothing more is read from the connection,
	// which the server then closes after answering. Otherwise the body is
	// read, and the framer stops after it when the head asked to close
	// the connection.
	Head(head Head) (readBody bool)
	// Body is called with consecutive pieces of the last head's body. A
	// piece is only valid during the call.
	Body(piece []byte)
	// BodyEnd is called once the last head's whole body (possibly empty)
	// has arrived; the next head may follow.
	BodyEnd()
	// Reject is called once for a request that cannot be read; the framer
	// stops.
	Reject(err *Error)
}

// Framer splits one connection's inbound byte stream into requests: it
// answers pipelined requests one after the other, keeps a head that is
// split across reads until it is complete, and hands Content-Length
// bodies over as they arrive, never holding a body itself.
type Framer struct {
	carry    []byte // the start of a head that is not complete yet
	inBody   bool
	bodyLeft int64
	lastHead bool // the current request asked to close the connection
	stopped  bool
}

// Stopped reports whether the framer has stopped reading requests.
func (f *Framer) Stopped() bool { return f.stopped }

// Feed consumes newly received bytes. data may be reused by the caller
// once Feed returns.
func (f *Framer) Feed(data []byte, receiver Receiver) {
	if f.stopped {
		return
	}
	if len(f.carry) > 0 {
		f.carry = append(f.carry, data...)
		data = f.carry
	}
	data = f.frame(data, receiver)
	f.keep(data)
}

func (f *Framer) frame(data []byte, receiver Receiver) []byte {
	for !f.stopped {
		if f.inBody {
			piece := min(int64(len(data)), f.bodyLeft)
			if piece > 0 {
				receiver.Body(data[:piece])
				data, f.bodyLeft = data[piece:], f.bodyLeft-piece
			}
			if f.bodyLeft > 0 {
				return data
			}
			f.inBody = false
			receiver.BodyEnd()
			f.stopped = f.lastHead
			continue
		}
		if len(data) == 0 {
			return data
		}
		head, err := Parse(data)
		if err == ErrIncomplete {
			return data
		}
		if err != nil {
			f.stopped = true
			receiver.Reject(err.(*Error))
			return nil
		}
		data = data[head.Len:]
		if !receiver.Head(head) {
			f.stopped = true
			return nil
		}
		f.inBody, f.bodyLeft, f.lastHead = true, head.ContentLength, !head.KeepAlive
	}
	return nil
}

// keep saves the unconsumed start of a head for the next Feed. It is
// always shorter than MaxHeadBytes, since Parse rejects longer heads.
func (f *Framer) keep(partial []byte) {
	if f.stopped || len(partial) == 0 {
		f.carry = f.carry[:0]
	} else {
		f.carry = append(f.carry[:0], partial...)
	}
	if cap(f.carry) > 4*MaxHeadBytes {
		// A large read merged into the carry once; do not keep its buffer
		// for the connection's whole life.
		f.carry = append([]byte(nil), f.carry...)
	}
}
