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
	}
	go stopOnSignal(config.Name, handler.booted)
	log.Printf("%s: listening on %s with %d event loop(s), db_pool=%d", config.Name, config.Addr(), loops, config.DBPoolSize)
	err = gnet.Run(handler, "tcp://"+config.Addr(),
		gnet.WithNumEventLoop(loops),
		gnet.WithTCPNoDelay(gnet.TCPNoDelay))
	if err != nil {
		log.Printf("%s: %v", config.Name, err)
		os.Exit(1)
	}
}

// stopOnSignal stops the engine on SIGTERM or SIGINT, giving connections
// contract.StopBudget to close.
func stopOnSignal(name string, booted <-chan gnet.Engine) {
	stop, cancel := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer cancel()
	<-stop.Done()
	log.Printf("%s: stopping", name)
	engine := <-booted
	budget, cancelBudget := context.WithTimeout(context.Background(), contract.StopBudget)
	defer cancelBudget()
	if err := engine.Stop(budget); err != nil {
		log.Printf("%s: event loops did not stop within %s: %v", name, contract.StopBudget, err)
		os.Exit(0)
	}
}
