// The oracle: an HTTP server that records each handler's own service time,
// the truth a load generator's latency is compared with. Every
// `-slow-every`th request takes `-slow`, the others `-fast` (a bimodal
// service time, deterministic so that every run sees the same mix).
//
//	GET /            sleeps, answers "Hello, World!", records the handler's time
//	GET /_truth      the recorded times' count and p50/p90/p99 in µs, as JSON
//	GET /_truth?reset=1  the same, then forgets them
//
// It prints "listening on HOST:PORT" once it accepts connections.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

type recorder struct {
	mu      sync.Mutex
	samples []time.Duration
}

func (r *recorder) add(d time.Duration) {
	r.mu.Lock()
	r.samples = append(r.samples, d)
	r.mu.Unlock()
}

// summary gives the count and nearest-rank percentiles in µs; reset forgets the samples.
func (r *recorder) summary(reset bool) map[string]any {
	r.mu.Lock()
	samples := append([]time.Duration(nil), r.samples...)
	if reset {
		r.samples = r.samples[:0]
	}
	r.mu.Unlock()
	sort.Slice(samples, func(i, j int) bool { return samples[i] < samples[j] })
	out := map[string]any{"count": len(samples)}
	for _, p := range []float64{50, 90, 99} {
		key := fmt.Sprintf("p%.0f_us", p)
		if len(samples) == 0 {
			out[key] = nil
			continue
		}
		rank := int(p/100*float64(len(samples))+0.999999) - 1
		if rank < 0 {
			rank = 0
		}
		out[key] = float64(samples[rank].Nanoseconds()) / 1e3
	}
	return out
}

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	fast := flag.Duration("fast", time.Millisecond, "the common service time")
	slow := flag.Duration("slow", 50*time.Millisecond, "the rare service time")
	slowEvery := flag.Uint64("slow-every", 20, "every Nth request takes -slow")
	flag.Parse()

	var served atomic.Uint64
	truth := &recorder{}
	body := []byte("Hello, World!")
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		start := time.Now()
		wait := *fast
		if served.Add(1)%*slowEvery == 0 {
			wait = *slow
		}
		time.Sleep(wait)
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write(body)
		truth.add(time.Since(start))
	})
	mux.HandleFunc("/_truth", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(truth.summary(r.URL.Query().Get("reset") == "1"))
	})
	listener, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("listening on %s\n", listener.Addr())
	log.Fatal(http.Serve(listener, mux))
}
