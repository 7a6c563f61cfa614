package contract

import "net/http"

// Endpoint names one path of the contract.
type Endpoint int

// The endpoints of the contract.
const (
	EndpointUnknown Endpoint = iota
	EndpointHealthz
	EndpointPlaintext
	EndpointJSON
	EndpointIO
	EndpointDB
	EndpointFile
	EndpointUpload
	EndpointMixed
	EndpointStats
	EndpointSelect1
)

type route struct {
	endpoint Endpoint
	method   string
}

var routes = map[string]route{
	"/healthz":   {EndpointHealthz, http.MethodGet},
	"/plaintext": {EndpointPlaintext, http.MethodGet},
	"/json":      {EndpointJSON, http.MethodGet},
	"/io":        {EndpointIO, http.MethodGet},
	"/db":        {EndpointDB, http.MethodGet},
	"/file":      {EndpointFile, http.MethodGet},
	"/upload":    {EndpointUpload, http.MethodPost},
	"/mixed":     {EndpointMixed, http.MethodGet},
	"/stats":     {EndpointStats, http.MethodGet},
	"/select1":   {EndpointSelect1, http.MethodGet},
}

// Resolve maps a method and path to an endpoint. For an unknown path it
// returns the 404 answer, for a known path with the wrong method the 405.
func Resolve(method, path string) (Endpoint, *Response) {
	found, ok := routes[path]
	if !ok {
		response := Error(http.StatusNotFound, "no endpoint at path %q", path)
		return EndpointUnknown, &response
	}
	if method != found.method {
		response := Error(http.StatusMethodNotAllowed,
			"method %s is not allowed on %s; use %s", method, path, found.method)
		response.Allow = found.method
		return EndpointUnknown, &response
	}
	return found.endpoint, nil
}
