// Command server is the worker-pool target: net/http accepts connections
// and reads requests on its per-connection goroutines, but every
// request's handler runs on one of a fixed number of ants workers. The
// connection goroutine submits the work and waits for it; when all
// workers are busy, up to queue_length submitters wait for a free one,
// and beyond that the pool refuses work and the answer is 503.
package main

import (
	"fmt"
	"log"
	"os"

	"github.com/panjf2000/ants/v2"

	"corobench/targets/go-common/contract"
	"corobench/targets/go-common/database"
	"corobench/targets/go-common/httpserve"
)

const (
	targetName = "go-ants"
	model      = "worker-pool"
)

func main() {
	config := contract.MustLoadConfig(targetName)
	settings, err := loadPoolSettings()
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", targetName, err)
		os.Exit(2)
	}
	pool, err := settings.newPool()
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: cannot create the worker pool: %v\n", targetName, err)
		os.Exit(2)
	}
	defer pool.Release()
	db := database.New(config.DatabaseURL, config.DBPoolSize)
	defer db.Close()
	handler := &pooledHandler{
		pool:     pool,
		settings: settings,
		name:     config.Name,
		inner:    &httpserve.Handler{Config: config, Model: model, DB: db},
	}
	description := fmt.Sprintf("%s, db_pool=%d", settings, config.DBPoolSize)
	if err := httpserve.ListenAndServe(config, httpserve.NewServer(handler), description); err != nil {
		log.Printf("%s: %v", config.Name, err)
		os.Exit(1)
	}
}

// poolSettings are the pool's parameters from target.toml.
type poolSettings struct {
	size        int
	queueLength int
	nonblocking bool
}

func loadPoolSettings() (poolSettings, error) {
	size, err := contract.EnvInt("POOL_SIZE", 64, 1, 1_000_000)
	if err != nil {
		return poolSettings{}, err
	}
	queueLength, err := contract.EnvInt("QUEUE_LENGTH", 1024, 1, 1_000_000)
	if err != nil {
		return poolSettings{}, err
	}
	nonblocking, err := contract.EnvChoice("NONBLOCKING", "false", "false", "true")
	if err != nil {
		return poolSettings{}, err
	}
	return poolSettings{size: size, queueLength: queueLength, nonblocking: nonblocking == "true"}, nil
}

func (s poolSettings) newPool() (*ants.Pool, error) {
	return ants.NewPool(s.size,
		ants.WithMaxBlockingTasks(s.queueLength),
		ants.WithNonblocking(s.nonblocking))
}

func (s poolSettings) String() string {
	return fmt.Sprintf("pool_size=%d queue_length=%d nonblocking=%v", s.size, s.queueLength, s.nonblocking)
}
