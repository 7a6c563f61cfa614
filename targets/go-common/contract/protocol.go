package contract

import (
	"fmt"
	"os"
	"slices"
	"strings"
)

// The values of HTTP_PROTOCOL (see "Protocols" in docs/contract.md).
const (
	HTTP1 = "http/1.1"
	H2    = "h2"
	H2C   = "h2c"
)

// Protocol is what a trial speaks to the target: HTTP_PROTOCOL, and the
// certificate and key files when it runs over TLS.
type Protocol struct {
	Name    string
	TLSCert string
	TLSKey  string
}

// TLS reports whether the target serves HTTPS.
func (p Protocol) TLS() bool {
	return p.TLSCert != ""
}

// String names the protocol as corobench does: http/1.1, tls, h2 or h2c.
func (p Protocol) String() string {
	if p.Name == HTTP1 && p.TLS() {
		return "tls"
	}
	return p.Name
}

// loadProtocol reads HTTP_PROTOCOL, TLS_CERT and TLS_KEY: http/1.1 when
// unset; both files or neither; h2 only over TLS, h2c only without it.
func loadProtocol() (Protocol, error) {
	name := strings.TrimSpace(os.Getenv("HTTP_PROTOCOL"))
	if name == "" {
		name = HTTP1
	}
	if !slices.Contains([]string{HTTP1, H2, H2C}, name) {
		return Protocol{}, fmt.Errorf("HTTP_PROTOCOL must be one of http/1.1, h2, h2c, got %q", name)
	}
	cert, key := os.Getenv("TLS_CERT"), os.Getenv("TLS_KEY")
	if (cert == "") != (key == "") {
		return Protocol{}, fmt.Errorf("TLS_CERT and TLS_KEY go together: set both to serve HTTPS, or neither (TLS_CERT=%q, TLS_KEY=%q)", cert, key)
	}
	protocol := Protocol{Name: name, TLSCert: cert, TLSKey: key}
	switch {
	case name == H2 && !protocol.TLS():
		return Protocol{}, fmt.Errorf("HTTP_PROTOCOL=h2 is HTTP/2 over TLS: set TLS_CERT and TLS_KEY, or use h2c for cleartext HTTP/2")
	case name == H2C && protocol.TLS():
		return Protocol{}, fmt.Errorf("HTTP_PROTOCOL=h2c is cleartext HTTP/2: unset TLS_CERT and TLS_KEY, or use h2 over TLS")
	}
	return protocol, nil
}

// Require fails unless the protocol is one of served (named as String
// names them); why says what the target lacks.
func (p Protocol) Require(why string, served ...string) error {
	if slices.Contains(served, p.String()) {
		return nil
	}
	return fmt.Errorf("this target does not serve %s (%s); it serves %s", p, why, strings.Join(served, ", "))
}
