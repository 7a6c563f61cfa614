// Package database reads one random row of the contract's `world` table
// through a pgx connection pool that is created on first use, so that a
// target starts and serves every other endpoint when PostgreSQL is absent.
package database

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"corobench/targets/go-common/contract"
)

// WorldRows is the number of rows in `world`; ids are 1..=WorldRows.
const WorldRows = 10_000

const (
	connectTimeout = 2 * time.Second
	queryTimeout   = 5 * time.Second
	selectWorld    = "SELECT id, randomnumber FROM world WHERE id = $1"
	selectOne      = "SELECT 1"
)

// Pool is a lazily created pgxpool of a fixed maximum size.
type Pool struct {
	url      string
	maxConns int32

	once    sync.Once
	pool    *pgxpool.Pool
	initErr error
}

// New prepares a pool for url with at most maxConns connections. Nothing
// is parsed or dialled until the first query.
func New(url string, maxConns int) *Pool {
	return &Pool{url: url, maxConns: int32(maxConns)}
}

var errNoDatabaseURL = errors.New("no database: DATABASE_URL is not set")

func (p *Pool) get() (*pgxpool.Pool, error) {
	p.once.Do(func() {
		if p.url == "" {
			p.initErr = errNoDatabaseURL
			return
		}
		config, err := pgxpool.ParseConfig(p.url)
		if err != nil {
			p.initErr = fmt.Errorf("DATABASE_URL is not a valid PostgreSQL URL: %w", err)
			return
		}
		config.MaxConns = p.maxConns
		config.MinConns = 0
		config.ConnConfig.ConnectTimeout = connectTimeout
		p.pool, p.initErr = pgxpool.NewWithConfig(context.Background(), config)
	})
	return p.pool, p.initErr
}

type world struct {
	ID           int32 `json:"id"`
	RandomNumber int32 `json:"randomNumber"`
}

// RandomWorld answers GET /db: one query for a uniformly random id. Any
// failure to reach the database is a 503 that says why; the target keeps
// serving everything else.
func (p *Pool) RandomWorld(ctx context.Context) contract.Response {
	return p.query(ctx, func(ctx context.Context, pool *pgxpool.Pool) contract.Response {
		var row world
		id := rand.IntN(WorldRows) + 1
		err := pool.QueryRow(ctx, selectWorld, id).Scan(&row.ID, &row.RandomNumber)
		if errors.Is(err, pgx.ErrNoRows) {
			return contract.Error(http.StatusInternalServerError,
				"table world has no row with id %d; it must hold ids 1..=%d", id, WorldRows)
		}
		if err != nil {
			return contract.Error(http.StatusServiceUnavailable, "database unavailable: reading world row %d: %s", id, oneLine(err))
		}
		return contract.JSON(http.StatusOK, row)
	})
}

// query runs one request's queries on the pool within the query timeout,
// or answers 503 when there is no pool.
func (p *Pool) query(ctx context.Context, run func(context.Context, *pgxpool.Pool) contract.Response) contract.Response {
	pool, err := p.get()
	if err != nil {
		return contract.Error(http.StatusServiceUnavailable, "database unavailable: %v", err)
	}
	ctx, cancel := context.WithTimeout(ctx, queryTimeout)
	defer cancel()
	return run(ctx, pool)
}

type selected struct {
	Select int32 `json:"select"`
}

// SelectOne answers GET /select1: one `SELECT 1` through the pool, so that
// the pool and one round trip to the database are all a request costs.
func (p *Pool) SelectOne(ctx context.Context) contract.Response {
	return p.query(ctx, func(ctx context.Context, pool *pgxpool.Pool) contract.Response {
		var row selected
		if err := pool.QueryRow(ctx, selectOne).Scan(&row.Select); err != nil {
			return contract.Error(http.StatusServiceUnavailable, "database unavailable: SELECT 1: %s", oneLine(err))
		}
		return contract.JSON(http.StatusOK, row)
	})
}

// Stats is the pool's own account of itself for /stats (pgxpool.Stat), or
// nil when there is no pool to ask (no DATABASE_URL, or stopping). Asking
// creates the pool if no request has yet, which opens no connection.
func (p *Pool) Stats() *contract.PoolStats {
	pool, err := p.get()
	if err != nil {
		return nil
	}
	return poolStats(pool.Stat())
}

func poolStats(stat *pgxpool.Stat) *contract.PoolStats {
	return &contract.PoolStats{
		Max:            stat.MaxConns(),
		Open:           stat.TotalConns(),
		Idle:           stat.IdleConns(),
		Acquires:       stat.AcquireCount(),
		NewConnections: stat.NewConnsCount(),
		EmptyAcquires:  stat.EmptyAcquireCount(),
		AcquireWaitUs:  stat.AcquireDuration().Microseconds(),
	}
}

// oneLine folds pgx's multi-line connection errors (one line per address
// tried) into one line for the JSON error.
func oneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}

var errClosed = errors.New("the server is stopping")

// Close closes the pool's connections if it was ever created, and keeps
// a pool that was never used from being created afterwards.
func (p *Pool) Close() {
	p.once.Do(func() { p.initErr = errClosed })
	if p.pool != nil {
		p.pool.Close()
	}
}
