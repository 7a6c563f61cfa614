package main

import "syscall"

// raiseFileLimit lifts RLIMIT_NOFILE's soft limit to its hard limit: every
// connection in flight holds a descriptor. It returns the limit now in
// force and, when it could not raise it, why.
func raiseFileLimit() (uint64, error) {
	var limit syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &limit); err != nil {
		return 0, err
	}
	if limit.Cur >= limit.Max {
		return limit.Cur, nil
	}
	current := limit.Cur
	limit.Cur = limit.Max
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &limit); err != nil {
		return current, err
	}
	return limit.Max, nil
}
