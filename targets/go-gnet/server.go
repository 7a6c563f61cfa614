package main

import (
	"log"
	"sync/atomic"

	"github.com/panjf2000/gnet/v2"

	"corobench/targets/go-common/database"
)

// server is the gnet event handler: gnet runs `loops` event loops (epoll
// reactors), each owning its connections and calling OnTraffic on the
// loop's goroutine with whatever bytes arrived.
type server struct {
	gnet.BuiltinEventEngine

	name      string
	dataDir   string
	uploadDir string
	db        *database.Pool
	banner    string // logged once the engine listens
	booted    chan gnet.Engine
	inFlight  atomic.Int64 // requests handed off the loop and not answered yet
}

func (s *server) OnBoot(engine gnet.Engine) gnet.Action {
	log.Printf("%s: %s", s.name, s.banner)
	s.booted <- engine
	return gnet.None
}

func (s *server) OnOpen(c gnet.Conn) ([]byte, gnet.Action) {
	c.SetContext(newConnState(s, c))
	return nil, gnet.None
}

// OnTraffic frames every complete request in the bytes at hand and
// answers them in order; answers that are ready by the end of the call
// leave in one write.
func (s *server) OnTraffic(c gnet.Conn) gnet.Action {
	st := c.Context().(*connState)
	data, _ := c.Next(-1)
	st.replies.cork()
	st.framer.Feed(data, st)
	st.replies.uncork()
	return gnet.None
}

func (s *server) OnClose(c gnet.Conn, _ error) gnet.Action {
	if st, ok := c.Context().(*connState); ok {
		st.closed()
	}
	return gnet.None
}
