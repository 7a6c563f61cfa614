package contract

import (
	"strings"
	"testing"
)

func TestLoadProtocolReadsTheFourProtocols(t *testing.T) {
	cases := []struct {
		protocol, cert, key, want string
	}{
		{"", "", "", "http/1.1"},
		{"http/1.1", "", "", "http/1.1"},
		{"http/1.1", "c.pem", "k.pem", "tls"},
		{"h2", "c.pem", "k.pem", "h2"},
		{"h2c", "", "", "h2c"},
	}
	for _, c := range cases {
		t.Setenv("HTTP_PROTOCOL", c.protocol)
		t.Setenv("TLS_CERT", c.cert)
		t.Setenv("TLS_KEY", c.key)
		protocol, err := loadProtocol()
		if err != nil || protocol.String() != c.want {
			t.Errorf("HTTP_PROTOCOL=%q TLS_CERT=%q: got %v, %v; want %s", c.protocol, c.cert, protocol, err, c.want)
		}
	}
}

func TestLoadProtocolRefusesWhatCannotBeServed(t *testing.T) {
	cases := []struct {
		protocol, cert, key, want string
	}{
		{"h3", "", "", `HTTP_PROTOCOL must be one of http/1.1, h2, h2c, got "h3"`},
		{"http/1.1", "c.pem", "", "TLS_CERT and TLS_KEY go together"},
		{"h2", "", "", "HTTP_PROTOCOL=h2 is HTTP/2 over TLS"},
		{"h2c", "c.pem", "k.pem", "HTTP_PROTOCOL=h2c is cleartext HTTP/2"},
	}
	for _, c := range cases {
		t.Setenv("HTTP_PROTOCOL", c.protocol)
		t.Setenv("TLS_CERT", c.cert)
		t.Setenv("TLS_KEY", c.key)
		_, err := loadProtocol()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("HTTP_PROTOCOL=%q TLS_CERT=%q: error %v; want %q", c.protocol, c.cert, err, c.want)
		}
	}
}

func TestRequireNamesWhatIsServed(t *testing.T) {
	h2c := Protocol{Name: H2C}
	if err := h2c.Require("gnet has no HTTP/2", "http/1.1"); err == nil ||
		err.Error() != "this target does not serve h2c (gnet has no HTTP/2); it serves http/1.1" {
		t.Errorf("Require = %v", err)
	}
	if err := (Protocol{Name: HTTP1}).Require("", "http/1.1"); err != nil {
		t.Errorf("cleartext HTTP/1.1 refused: %v", err)
	}
}
