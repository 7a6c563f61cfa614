// Command orders-service is a small HTTP service of the kind a backend
// engineer measures with corobench: it serves a page of orders as JSON,
// built and encoded for every request, on the port given with --port.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"
)

// Order is one line of the listing.
type Order struct {
	ID       int     `json:"id"`
	Customer string  `json:"customer"`
	Total    float64 `json:"total"`
	Items    int     `json:"items"`
}

// Page is what GET /api/orders answers.
type Page struct {
	Orders []Order `json:"orders"`
	Next   int     `json:"next"`
}

// page builds `limit` orders starting at `from`, deterministically.
func page(from, limit int) Page {
	orders := make([]Order, 0, limit)
	for i := from; i < from+limit; i++ {
		orders = append(orders, Order{
			ID:       i,
			Customer: "customer-" + strconv.Itoa(i%97),
			Total:    float64(i%1000) * 1.25,
			Items:    1 + i%7,
		})
	}
	return Page{Orders: orders, Next: from + limit}
}

// intParam reads a query parameter between 0 and max, or the default.
func intParam(r *http.Request, name string, def, max int) (int, error) {
	text := r.URL.Query().Get(name)
	if text == "" {
		return def, nil
	}
	n, err := strconv.Atoi(text)
	if err != nil || n < 0 || n > max {
		return 0, fmt.Errorf("%s must be a whole number from 0 to %d", name, max)
	}
	return n, nil
}

func orders(w http.ResponseWriter, r *http.Request) {
	from, err := intParam(r, "from", 0, 1_000_000)
	if err == nil {
		var limit int
		limit, err = intParam(r, "limit", 20, 500)
		if err == nil {
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(page(from, limit))
			return
		}
	}
	http.Error(w, err.Error(), http.StatusBadRequest)
}

func main() {
	port := flag.Int("port", 8080, "the TCP port to listen on (127.0.0.1)")
	version := flag.Bool("version", false, "print the version and exit")
	flag.Parse()
	if *version {
		fmt.Println("orders-service 1.0")
		return
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/api/orders", orders)
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("ok"))
	})
	server := &http.Server{
		Addr:              "127.0.0.1:" + strconv.Itoa(*port),
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		<-stop
		_ = server.Close()
	}()
	if err := server.ListenAndServe(); err != nil && err != http.ErrServerClosed {
		log.Fatal(err)
	}
}
