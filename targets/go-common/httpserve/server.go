package httpserve

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"corobench/targets/go-common/contract"
)

// maxHeadBytes keeps request heads small, as the gnet target does.
const maxHeadBytes = 8 << 10

// NewServer returns an http.Server for the contract: keep-alive on, heads
// bounded, and every request handled by handler.
func NewServer(handler http.Handler) *http.Server {
	return &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 30 * time.Second,
		MaxHeaderBytes:    maxHeadBytes,
	}
}

// ListenAndServe listens on the configured port in the configured
// protocol and serves until SIGTERM or SIGINT, then shuts down within
// contract.StopBudget. settings describes the target's parameters for the
// start-up log line. Bad TLS files end the process with exit code 2.
func ListenAndServe(config contract.Config, server *http.Server, settings string) error {
	if err := configureProtocol(server, config.Protocol); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", config.Name, err)
		os.Exit(2)
	}
	listener, err := net.Listen("tcp", config.Addr())
	if err != nil {
		return err
	}
	log.Printf("%s: listening on %s (%s), %s", config.Name, config.Addr(), config.Protocol, settings)
	stop, cancel := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer cancel()

	served := make(chan error, 1)
	go func() {
		if config.Protocol.TLS() {
			served <- server.ServeTLS(listener, "", "")
		} else {
			served <- server.Serve(listener)
		}
	}()

	select {
	case err := <-served:
		return err
	case <-stop.Done():
	}
	log.Printf("%s: stopping: waiting up to %s for requests in flight", config.Name, contract.StopBudget)
	budget, cancelBudget := context.WithTimeout(context.Background(), contract.StopBudget)
	defer cancelBudget()
	if err := server.Shutdown(budget); err != nil {
		log.Printf("%s: requests still in flight after %s, closing their connections", config.Name, contract.StopBudget)
		_ = server.Close()
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
