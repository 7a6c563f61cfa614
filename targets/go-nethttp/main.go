// Command server is the goroutine-per-connection target: plain net/http,
// whose accept loop starts one goroutine per connection; that goroutine
// reads each request, runs the handler and writes the answer, blocking
// as it likes, while the Go scheduler multiplexes all of them over
// GOMAXPROCS OS threads.
package main

import (
	"fmt"
	"log"
	"os"

	"corobench/targets/go-common/contract"
	"corobench/targets/go-common/database"
	"corobench/targets/go-common/httpserve"
)

const (
	targetName = "go-nethttp"
	model      = "goroutine-per-connection"
)

func main() {
	config := contract.MustLoadConfig(targetName)
	db := database.New(config.DatabaseURL, config.DBPoolSize)
	defer db.Close()
	handler := &httpserve.Handler{Config: config, Model: model, DB: db}
	settings := fmt.Sprintf("db_pool=%d", config.DBPoolSize)
	if err := httpserve.ListenAndServe(config, httpserve.NewServer(handler), settings); err != nil {
		log.Printf("%s: %v", config.Name, err)
		db.Close()
		os.Exit(1)
	}
}
