// Package contract holds the pieces of the corobench HTTP contract
// (docs/contract.md) that every Go target shares: the Date header, query
// parameters and their 400 messages, the endpoints' bodies, the SHA-256
// chain, the payload reader, uploads and /stats. It knows nothing about how
// a target schedules work: that is each target's concurrency model.
package contract

import (
	"net/http"
	"sync/atomic"
	"time"
)

type formattedDate struct {
	unixSec int64
	text    string
}

var currentDate atomic.Pointer[formattedDate]

// HTTPDate returns the current time in IMF-fixdate form. The text is
// formatted at most once per wall-clock second and shared by every
// connection, which the contract allows and which keeps formatting off the
// per-request path.
func HTTPDate() string {
	now := time.Now()
	unixSec := now.Unix()
	if cached := currentDate.Load(); cached != nil && cached.unixSec == unixSec {
		return cached.text
	}
	fresh := &formattedDate{unixSec: unixSec, text: now.UTC().Format(http.TimeFormat)}
	currentDate.Store(fresh)
	return fresh.text
}
