package main

import (
	"context"
	"sync"
	"time"

	"github.com/panjf2000/gnet/v2"
)

// reply is one encoded answer. last closes the connection after it.
type reply struct {
	head []byte
	body []byte
	last bool
}

// replyQueue sends a connection's answers in request order, although
// requests handed off the loop finish in any order, on any goroutine.
//
// While the loop is inside OnTraffic the queue is corked: answers that
// become sendable collect in one batch, written with a single writev when
// OnTraffic ends, so pipelined answers share a syscall. Outside OnTraffic
// a finishing goroutine sends with AsyncWritev, which gnet runs on the
// loop in submission order. The loop writes directly only when no such
// asynchronous write is still queued, so a direct write can never
// overtake an earlier answer.
type replyQueue struct {
	conn gnet.Conn

	mu          sync.Mutex
	nextSeq     uint64 // given to the next request
	flushSeq    uint64 // the answer to send next
	finished    map[uint64]reply
	corked      bool
	batch       replyBatch
	asyncWrites int // AsyncWritev calls whose write has not run yet
	closing     bool
}

// reserve numbers the next request; answers go out in this order.
func (q *replyQueue) reserve() uint64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	seq := q.nextSeq
	q.nextSeq++
	return seq
}

// finish hands over the answer to request seq, from any goroutine.
func (q *replyQueue) finish(seq uint64, answer reply) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if seq != q.flushSeq {
		if q.finished == nil {
			q.finished = make(map[uint64]reply)
		}
		q.finished[seq] = answer
		return
	}
	q.take(answer)
	for {
		next, ok := q.finished[q.flushSeq]
		if !ok {
			break
		}
		delete(q.finished, q.flushSeq)
		q.take(next)
	}
	if !q.corked {
		q.send(false)
	}
}

func (q *replyQueue) take(answer reply) {
	q.batch.add(answer.head, answer.body)
	q.flushSeq++
	q.closing = q.closing || answer.last
}

// cork is called by the loop when OnTraffic starts.
func (q *replyQueue) cork() {
	q.mu.Lock()
	q.corked = true
	q.mu.Unlock()
}

// uncork is called by the loop when OnTraffic ends: it sends the batch.
func (q *replyQueue) uncork() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.corked = false
	q.send(true)
}

func (q *replyQueue) send(onLoop bool) {
	if q.batch.empty() {
		return
	}
	iov, closing := q.batch.take(), q.closing
	if onLoop && q.asyncWrites == 0 {
		_, _ = q.conn.Writev(iov)
		if closing {
			closeWhenFlushed(q.conn, time.Now().Add(closeFlushLimit))
		}
		return
	}
	q.asyncWrites++
	err := q.conn.AsyncWritev(iov, func(c gnet.Conn, _ error) error {
		q.mu.Lock()
		q.asyncWrites--
		q.mu.Unlock()
		if closing {
			closeWhenFlushed(c, time.Now().Add(closeFlushLimit))
		}
		return nil
	})
	if err != nil { // the engine is stopping; the connection goes with it
		q.asyncWrites--
	}
}

const (
	closeFlushLimit = 30 * time.Second
	closeFlushPoll  = 5 * time.Millisecond
)

// closeWhenFlushed closes a connection once gnet has sent everything
// queued for it. gnet's own close drops what a full socket buffer could
// not take yet, which would cut a large last answer short. Runs on the
// loop.
func closeWhenFlushed(c gnet.Conn, deadline time.Time) {
	if c.OutboundBuffered() == 0 || time.Now().After(deadline) {
		_ = c.Close()
		return
	}
	loop := c.EventLoop()
	time.AfterFunc(closeFlushPoll, func() {
		_ = loop.Execute(context.Background(), gnet.RunnableFunc(func(context.Context) error {
			closeWhenFlushed(c, deadline)
			return nil
		}))
	})
}

// Bodies at least this long go out as their own iovec instead of being
// copied behind their head.
const separateBodyBytes = 16 << 10

// maxIovecs stays below Linux's IOV_MAX (1024) for one writev.
const maxIovecs = 1000

// replyBatch gathers answers for one writev: small ones are copied into a
// shared buffer, large bodies are referenced as they are.
type replyBatch struct {
	iov  [][]byte
	tail []byte
}

func (b *replyBatch) add(head, body []byte) {
	b.tail = append(b.tail, head...)
	if len(body) >= separateBodyBytes && len(b.iov) < maxIovecs-2 {
		b.iov = append(b.iov, b.tail, body)
		b.tail = nil
		return
	}
	b.tail = append(b.tail, body...)
}

func (b *replyBatch) empty() bool { return len(b.iov) == 0 && len(b.tail) == 0 }

// take returns the batch and starts a new one; the returned buffers are
// never written again, since AsyncWritev may still hold them.
func (b *replyBatch) take() [][]byte {
	iov := b.iov
	if len(b.tail) > 0 {
		iov = append(iov, b.tail)
	}
	b.iov, b.tail = nil, nil
	return iov
}
