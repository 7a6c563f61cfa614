// Command server is the event-loop target: gnet's epoll reactors read and
// write every connection without blocking; whatever would block (waits,
// the database, disk) is handed to goroutines that answer through
// gnet's AsyncWrite.
package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/panjf2000/gnet/v2"

	"corobench/targets/go-common/contract"
	"corobench/targets/go-common/database"
)

const (
	targetName = "go-gnet"
	model      = "event-loop"
)

func main() {
	config := contract.MustLoadConfig(targetName)
	if err := config.Protocol.Require("gnet has neither TLS nor HTTP/2", "http/1.1"); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", targetName, err)
		os.Exit(2)
	}
	loops, err := contract.EnvInt("LOOPS", 1, 1, 256)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", targetName, err)
		os.Exit(2)
	}
	db := database.New(config.DatabaseURL, config.DBPoolSize)
	defer db.Close()
	handler := &server{
		name:      config.Name,
		dataDir:   config.DataDir,
		uploadDir: config.UploadDir,
		db:        db,
		booted:    make(chan gnet.Engine, 1),
		banner: fmt.Sprintf("listening on %s with %d event loop(s), db_pool=%d",
			config.Addr(), loops, config.DBPoolSize),
	}
	go stopOnSignal(handler)
	err = gnet.Run(handler, "tcp://"+config.Addr(),
		gnet.WithNumEventLoop(loops),
		gnet.WithTCPNoDelay(gnet.TCPNoDelay))
	if err != nil {
		log.Printf("%s: %v", config.Name, err)
		os.Exit(1)
	}
}

// stopOnSignal stops on SIGTERM or SIGINT: requests handed off the loops
// get up to contract.StopBudget to be answered, then the engine closes
// every connection.
func stopOnSignal(s *server) {
	stop, cancel := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer cancel()
	<-stop.Done()
	engine := <-s.booted
	deadline := time.Now().Add(contract.StopBudget)
	log.Printf("%s: stopping: waiting up to %s for %d request(s) in flight", s.name, contract.StopBudget, s.inFlight.Load())
	for s.inFlight.Load() > 0 && time.Now().Before(deadline) {
		time.Sleep(stopPollInterval)
	}
	budget, cancelBudget := context.WithTimeout(context.Background(), stopEngineBudget)
	defer cancelBudget()
	if err := engine.Stop(budget); err != nil {
		log.Printf("%s: event loops did not stop within %s: %v", s.name, stopEngineBudget, err)
		os.Exit(0)
	}
}

const (
	stopPollInterval = 10 * time.Millisecond
	// gnet's Engine.Stop checks every 500 ms whether the loops are done.
	stopEngineBudget = time.Second
)
