package httpserve

import (
	"crypto/tls"
	"fmt"
	"net/http"

	"corobench/targets/go-common/contract"
)

// configureProtocol makes server speak what the trial asks for: only
// HTTP/1.1 in cleartext and over TLS (so that a TLS trial measures
// HTTP/1.1, whatever a client offers), HTTP/1.1 and h2 by ALPN for h2, and
// HTTP/1.1 beside h2c by prior knowledge for h2c. Over TLS the key pair is
// loaded here, so that a bad file stops the target before it listens.
func configureProtocol(server *http.Server, protocol contract.Protocol) error {
	protocols := new(http.Protocols)
	protocols.SetHTTP1(true)
	switch protocol.Name {
	case contract.H2:
		protocols.SetHTTP2(true)
	case contract.H2C:
		protocols.SetUnencryptedHTTP2(true)
	}
	server.Protocols = protocols
	if !protocol.TLS() {
		return nil
	}
	pair, err := tls.LoadX509KeyPair(protocol.TLSCert, protocol.TLSKey)
	if err != nil {
		return fmt.Errorf("TLS_CERT %q and TLS_KEY %q: %w", protocol.TLSCert, protocol.TLSKey, err)
	}
	server.TLSConfig = &tls.Config{
		MinVersion:   tls.VersionTLS12,
		Certificates: []tls.Certificate{pair},
	}
	return nil
}
