// Package httpserve serves the contract through net/http. It runs each
// request on whatever goroutine calls ServeHTTP; the targets decide which
// goroutine that is (net/http's own per-connection goroutine, or a worker
// of a pool).
package httpserve

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"corobench/targets/go-common/contract"
	"corobench/targets/go-common/database"
)

// Handler answers every endpoint of the contract. Waits and blocking
// reads happen on the calling goroutine.
type Handler struct {
	Config contract.Config
	Model  string
	DB     *database.Pool
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	Write(w, h.Config.Name, h.answer(r))
}

func (h *Handler) answer(r *http.Request) contract.Response {
	endpoint, rejected := contract.Resolve(r.Method, r.URL.Path)
	if rejected != nil {
		return *rejected
	}
	query := r.URL.RawQuery
	switch endpoint {
	case contract.EndpointHealthz:
		return contract.Healthz()
	case contract.EndpointPlaintext:
		return contract.Plaintext()
	case contract.EndpointJSON:
		return contract.HelloJSON()
	case contract.EndpointIO:
		return waitIO(query)
	case contract.EndpointDB:
		return h.DB.RandomWorld(r.Context())
	case contract.EndpointFile:
		return h.file(query)
	case contract.EndpointUpload:
		return h.upload(r)
	case contract.EndpointMixed:
		return mixed(query)
	case contract.EndpointSelect1:
		return h.DB.SelectOne(r.Context())
	default:
		return contract.StatsNow(h.Model, h.DB.Stats())
	}
}

func waitIO(query string) contract.Response {
	waitMs, err := contract.IOWaitMs.Parse(query)
	if err != nil {
		return contract.BadParam(err)
	}
	time.Sleep(time.Duration(waitMs) * time.Millisecond)
	return contract.IOWaited(waitMs)
}

func mixed(query string) contract.Response {
	iters, err := contract.MixedIters.Parse(query)
	if err != nil {
		return contract.BadParam(err)
	}
	waitMs, err := contract.MixedWaitMs.Parse(query)
	if err != nil {
		return contract.BadParam(err)
	}
	digest := contract.ChainDigest(iters)
	time.Sleep(time.Duration(waitMs) * time.Millisecond)
	return contract.MixedDone(digest, iters, waitMs)
}

func (h *Handler) file(query string) contract.Response {
	kb, err := contract.FileKB.Parse(query)
	if err != nil {
		return contract.BadParam(err)
	}
	payload, err := contract.ReadPayload(h.Config.DataDir, kb)
	if err != nil {
		return contract.Error(http.StatusInternalServerError, "%v", err)
	}
	return contract.Payload(payload)
}

func (h *Handler) upload(r *http.Request) contract.Response {
	if r.ContentLength > contract.MaxUploadBytes {
		return contract.UploadTooLarge(r.ContentLength)
	}
	result, err := contract.StoreUpload(h.Config.UploadDir, r.Body)
	var readErr *contract.BodyReadError
	switch {
	case errors.Is(err, contract.ErrUploadTooLarge):
		return contract.UploadTooLarge(r.ContentLength)
	case errors.As(err, &readErr):
		return contract.Error(http.StatusBadRequest, "%v", err)
	case err != nil:
		return contract.Error(http.StatusInternalServerError, "%v", err)
	}
	return contract.JSON(http.StatusOK, result)
}

// Write sends a complete answer with the headers every response carries.
// Content-Length is always set, so net/http never chunks.
func Write(w http.ResponseWriter, serverName string, response contract.Response) {
	header := w.Header()
	header["Server"] = []string{serverName}
	header["Date"] = []string{contract.HTTPDate()}
	header["Content-Type"] = []string{response.ContentType}
	header["Content-Length"] = []string{strconv.Itoa(len(response.Body))}
	if response.Allow != "" {
		header["Allow"] = []string{response.Allow}
	}
	if response.Close {
		header["Connection"] = []string{"close"}
	}
	w.WriteHeader(response.Status)
	_, _ = w.Write(response.Body)
}
