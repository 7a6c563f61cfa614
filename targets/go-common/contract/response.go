package contract

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// Content types the contract names.
const (
	TextPlain       = "text/plain; charset=utf-8"
	ApplicationJSON = "application/json"
	OctetStream     = "application/octet-stream"
)

// Response is a complete answer, independent of the transport that sends
// it: net/http writes it through a ResponseWriter, gnet frames it itself.
type Response struct {
	Status      int
	ContentType string
	Body        []byte
	// Allow lists the methods of a path answered 405.
	Allow string
	// Close asks the transport to close the connection after this answer
	// (a 413 whose body was never read).
	Close bool
}

// Text answers 200 with a plain-text body.
func Text(body string) Response {
	return Response{Status: http.StatusOK, ContentType: TextPlain, Body: []byte(body)}
}

// JSON answers with v serialised by encoding/json, per request.
func JSON(status int, v any) Response {
	body, err := json.Marshal(v)
	if err != nil {
		return Error(http.StatusInternalServerError, "cannot serialise the answer: %v", err)
	}
	return Response{Status: status, ContentType: ApplicationJSON, Body: body}
}

type errorBody struct {
	Error string `json:"error"`
}

// Error answers status with the contract's JSON error body.
func Error(status int, format string, args ...any) Response {
	body, _ := json.Marshal(errorBody{Error: fmt.Sprintf(format, args...)})
	return Response{Status: status, ContentType: ApplicationJSON, Body: body}
}

// BadParam answers 400 for a parameter error, whose message names it.
func BadParam(err error) Response {
	return Error(http.StatusBadRequest, "%s", err.Error())
}

// Healthz is the answer to GET /healthz.
func Healthz() Response { return Text("ok") }

// Plaintext is the answer to GET /plaintext.
func Plaintext() Response { return Text("Hello, World!") }

type helloBody struct {
	Message string `json:"message"`
}

// HelloJSON is the answer to GET /json, serialised afresh each call.
func HelloJSON() Response {
	return JSON(http.StatusOK, helloBody{Message: "Hello, World!"})
}

type ioBody struct {
	Message  string `json:"message"`
	WaitedMs int    `json:"waited_ms"`
}

// IOWaited is the answer to GET /io once the wait of waitedMs is over.
func IOWaited(waitedMs int) Response {
	return JSON(http.StatusOK, ioBody{Message: "Hello, World!", WaitedMs: waitedMs})
}

type mixedBody struct {
	Digest   string `json:"digest"`
	Iters    int    `json:"iters"`
	WaitedMs int    `json:"waited_ms"`
}

// MixedDone is the answer to GET /mixed once the digest is computed and
// the wait is over.
func MixedDone(digest string, iters, waitedMs int) Response {
	return JSON(http.StatusOK, mixedBody{Digest: digest, Iters: iters, WaitedMs: waitedMs})
}

// Payload is the answer to GET /file: the bytes read from payload.bin.
func Payload(payload []byte) Response {
	return Response{Status: http.StatusOK, ContentType: OctetStream, Body: payload}
}

// UploadTooLarge answers 413 and closes the connection, since the rest of
// the body is not read. contentLength is negative when the body declared
// no length and simply grew too long.
func UploadTooLarge(contentLength int64) Response {
	response := Error(http.StatusRequestEntityTooLarge,
		"Content-Length %d exceeds the upload limit of %d bytes (64 MiB)", contentLength, MaxUploadBytes)
	if contentLength < 0 {
		response = Error(http.StatusRequestEntityTooLarge,
			"the upload body exceeds the limit of %d bytes (64 MiB)", MaxUploadBytes)
	}
	response.Close = true
	return response
}

// StatsNow is the answer to GET /stats; pool is nil without a database pool.
func StatsNow(model string, pool *PoolStats) Response {
	stats := CurrentStats(model)
	stats.Pool = pool
	return JSON(http.StatusOK, stats)
}
