package http1

import (
	"net/http"
	"strconv"

	"corobench/targets/go-common/contract"
)

// Continue is the interim answer to Expect: 100-continue.
var Continue = []byte("HTTP/1.1 100 Continue\r\n\r\n")

// AppendHead appends the status line and headers of an answer: every
// answer carries Server, Date, Content-Type and Content-Length, and
// Connection: close when the connection ends after it.
func AppendHead(dst []byte, response contract.Response, serverName string, keepAlive bool) []byte {
	dst = append(dst, "HTTP/1.1 "...)
	dst = strconv.AppendInt(dst, int64(response.Status), 10)
	dst = append(dst, ' ')
	dst = append(dst, http.StatusText(response.Status)...)
	dst = append(dst, "\r\nServer: "...)
	dst = append(dst, serverName...)
	dst = append(dst, "\r\nDate: "...)
	dst = append(dst, contract.HTTPDate()...)
	dst = append(dst, "\r\nContent-Type: "...)
	dst = append(dst, response.ContentType...)
	dst = append(dst, "\r\nContent-Length: "...)
	dst = strconv.AppendInt(dst, int64(len(response.Body)), 10)
	if response.Allow != "" {
		dst = append(dst, "\r\nAllow: "...)
		dst = append(dst, response.Allow...)
	}
	if !keepAlive {
		dst = append(dst, "\r\nConnection: close"...)
	}
	return append(dst, "\r\n\r\n"...)
}
