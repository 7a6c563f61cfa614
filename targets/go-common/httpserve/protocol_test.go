package httpserve

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"corobench/targets/go-common/contract"
)

// writeKeyPair writes a self-signed certificate for 127.0.0.1 and its key.
func writeKeyPair(t *testing.T) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	template := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA:         true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, template, template, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})
	if os.WriteFile(certFile, certPEM, 0o600) != nil || os.WriteFile(keyFile, keyPEM, 0o600) != nil {
		t.Fatal("cannot write the key pair")
	}
	pool = x509.NewCertPool()
	pool.AppendCertsFromPEM(certPEM)
	return certFile, keyFile, pool
}

// serve starts a configured server on a free loopback port and returns its URL.
func serve(t *testing.T, protocol contract.Protocol) string {
	t.Helper()
	server := NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(r.Proto))
	}))
	if err := configureProtocol(server, protocol); err != nil {
		t.Fatal(err)
	}
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		if protocol.TLS() {
			_ = server.ServeTLS(listener, "", "")
		} else {
			_ = server.Serve(listener)
		}
	}()
	t.Cleanup(func() { _ = server.Close() })
	scheme := "http"
	if protocol.TLS() {
		scheme = "https"
	}
	return scheme + "://" + listener.Addr().String() + "/"
}

// protoOf answers which protocol a client that offers h2 and HTTP/1.1
// (or only h2c, when h2c is set) ends up speaking.
func protoOf(t *testing.T, url string, pool *x509.CertPool, h2c bool) string {
	t.Helper()
	protocols := new(http.Protocols)
	if h2c {
		protocols.SetUnencryptedHTTP2(true)
	} else {
		protocols.SetHTTP1(true)
		protocols.SetHTTP2(true)
	}
	client := &http.Client{Transport: &http.Transport{
		Protocols:       protocols,
		TLSClientConfig: &tls.Config{RootCAs: pool},
	}}
	response, err := client.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer response.Body.Close()
	return response.Proto
}

func TestEachProtocolIsServedAsAsked(t *testing.T) {
	cert, key, pool := writeKeyPair(t)
	cases := []struct {
		protocol contract.Protocol
		h2c      bool
		want     string
	}{
		{contract.Protocol{Name: contract.HTTP1}, false, "HTTP/1.1"},
		{contract.Protocol{Name: contract.HTTP1, TLSCert: cert, TLSKey: key}, false, "HTTP/1.1"},
		{contract.Protocol{Name: contract.H2, TLSCert: cert, TLSKey: key}, false, "HTTP/2.0"},
		{contract.Protocol{Name: contract.H2C}, true, "HTTP/2.0"},
		{contract.Protocol{Name: contract.H2C}, false, "HTTP/1.1"},
	}
	for _, c := range cases {
		url := serve(t, c.protocol)
		if got := protoOf(t, url, pool, c.h2c); got != c.want {
			t.Errorf("%s (client h2c only: %v): spoke %s; want %s", c.protocol, c.h2c, got, c.want)
		}
	}
}

func TestBadKeyFilesAreRefusedBeforeListening(t *testing.T) {
	cert, _, _ := writeKeyPair(t)
	err := configureProtocol(NewServer(http.NotFoundHandler()),
		contract.Protocol{Name: contract.HTTP1, TLSCert: cert, TLSKey: cert})
	if err == nil {
		t.Fatal("a certificate given as its own key was accepted")
	}
}
