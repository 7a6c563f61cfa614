package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"
)

// errorKind sorts a failed request by what failed.
type errorKind uint8

const (
	kindNone errorKind = iota
	// kindPortsExhausted: connect found no free local port (EADDRNOTAVAIL),
	// the usual end of a connection per request on loopback.
	kindPortsExhausted
	// kindConnect: any other failure to open the connection (refused,
	// reset during the dial, no file descriptor, unreachable).
	kindConnect
	// kindTimeout: http.Client.Timeout or a deadline passed.
	kindTimeout
	// kindOther: anything else, including an answer other than 200.
	kindOther
	kindCount
)

func (k errorKind) unit() string {
	return [...]string{"", "ports-exhausted", "connect-errors", "timeouts", "other-errors"}[k]
}

// statusError is an answer that arrived but was not 200 OK.
type statusError struct{ status int }

func (e *statusError) Error() string {
	return fmt.Sprintf("unexpected status %d", e.status)
}

// classify sorts err by kind. A dial that timed out counts as a timeout.
func classify(err error) errorKind {
	switch {
	case err == nil:
		return kindNone
	case errors.Is(err, syscall.EADDRNOTAVAIL):
		return kindPortsExhausted
	case errors.Is(err, syscall.ECONNREFUSED), fdExhausted(err),
		errors.Is(err, syscall.ENETUNREACH), errors.Is(err, syscall.EHOSTUNREACH):
		return kindConnect
	case isTimeout(err):
		return kindTimeout
	case isDial(err):
		return kindConnect
	default:
		return kindOther
	}
}

// fdExhausted says whether the process or the system ran out of file
// descriptors (EMFILE, ENFILE).
func fdExhausted(err error) bool {
	return errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE)
}

func isTimeout(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded) {
		return true
	}
	var netErr net.Error
	return errors.As(err, &netErr) && netErr.Timeout()
}

// isDial says whether err came from opening the connection (a reset or a
// DNS failure during the dial, for example).
func isDial(err error) bool {
	var opErr *net.OpError
	return errors.As(err, &opErr) && opErr.Op == "dial"
}
