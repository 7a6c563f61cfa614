package contract

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

// IntParam describes one integer query parameter of an endpoint: its name,
// the value used when it is absent, and its inclusive range.
type IntParam struct {
	Name    string
	Default int
	Min     int
	Max     int
}

// The parameters the contract defines, with their defaults and ranges.
var (
	IOWaitMs    = IntParam{Name: "ms", Default: 10, Min: 0, Max: 10_000}
	FileKB      = IntParam{Name: "kb", Default: 1, Min: 1, Max: 10_240}
	MixedIters  = IntParam{Name: "iters", Default: 1_000, Min: 0, Max: 1_000_000}
	MixedWaitMs = IntParam{Name: "ms", Default: 10, Min: 0, Max: 10_000}
)

// ParamError is a query parameter that is not an integer or is out of range.
// Its message names the parameter, as the contract's 400 answer requires.
type ParamError struct {
	Param IntParam
}

func (e *ParamError) Error() string {
	return fmt.Sprintf("%s must be an integer in %d..=%d", e.Param.Name, e.Param.Min, e.Param.Max)
}

// Lookup finds the first value of a query parameter in a raw query string
// (the part after '?'). Unknown parameters are ignored, as the contract says.
// A value whose escapes are malformed is returned as written, so that it
// fails integer parsing instead of silently falling back to the default.
func Lookup(rawQuery, name string) (value string, found bool) {
	for rawQuery != "" {
		var pair string
		pair, rawQuery, _ = strings.Cut(rawQuery, "&")
		rawKey, rawValue, _ := strings.Cut(pair, "=")
		key, err := url.QueryUnescape(rawKey)
		if err != nil || key != name {
			continue
		}
		if unescaped, err := url.QueryUnescape(rawValue); err == nil {
			return unescaped, true
		}
		return rawValue, true
	}
	return "", false
}

// Parse reads the parameter from a raw query string: its default when
// absent, otherwise a decimal integer within range.
func (p IntParam) Parse(rawQuery string) (int, error) {
	raw, found := Lookup(rawQuery, p.Name)
	if !found {
		return p.Default, nil
	}
	value, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || value < int64(p.Min) || value > int64(p.Max) {
		return 0, &ParamError{Param: p}
	}
	return int(value), nil
}
