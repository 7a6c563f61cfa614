package contract

import (
	"strings"
	"testing"
)

func TestLoadConfigReadsTheEnvironment(t *testing.T) {
	t.Setenv("PORT", "8123")
	t.Setenv("TARGET_NAME", "go-test")
	t.Setenv("DATA_DIR", "/data")
	t.Setenv("UPLOAD_DIR", "/up")
	t.Setenv("DATABASE_URL", "postgres://u@127.0.0.1:5/db")
	t.Setenv("DB_POOL", "4")
	t.Setenv("GOMAXPROCS", "2")
	config, err := LoadConfig("fallback")
	if err != nil {
		t.Fatal(err)
	}
	want := Config{Listen: "127.0.0.1", Port: 8123, Name: "go-test", DataDir: "/data", UploadDir: "/up",
		DatabaseURL: "postgres://u@127.0.0.1:5/db", DBPoolSize: 4, Protocol: Protocol{Name: HTTP1}}
	if config != want || config.Addr() != "127.0.0.1:8123" {
		t.Errorf("LoadConfig = %+v; want %+v", config, want)
	}
}

func TestLoadConfigRejectsBadValues(t *testing.T) {
	cases := []struct {
		name, value, want string
	}{
		{"PORT", "http", `PORT must be a TCP port in 1..=65535, got "http"`},
		{"PORT", "70000", `PORT must be a TCP port in 1..=65535, got "70000"`},
		{"DB_POOL", "0", `DB_POOL must be an integer in 1..=1024, got "0"`},
		{"GOMAXPROCS", "lots", `GOMAXPROCS must be an integer in 1..=256, got "lots"`},
		{"LISTEN_ADDR", "localhost", `LISTEN_ADDR must be an IP address such as 127.0.0.1 or 0.0.0.0, got "localhost"`},
	}
	for _, c := range cases {
		t.Run(c.name+"="+c.value, func(t *testing.T) {
			t.Setenv("PORT", "8080")
			t.Setenv(c.name, c.value)
			_, err := LoadConfig("x")
			if err == nil || err.Error() != c.want {
				t.Errorf("error = %v; want %q", err, c.want)
			}
		})
	}
}

func TestLoadConfigListensWhereItIsTold(t *testing.T) {
	t.Setenv("PORT", "8123")
	for listen, want := range map[string]string{
		"127.0.0.2": "127.0.0.2:8123",
		"0.0.0.0":   "0.0.0.0:8123",
		"::1":       "[::1]:8123",
	} {
		t.Setenv("LISTEN_ADDR", listen)
		config, err := LoadConfig("x")
		if err != nil || config.Addr() != want {
			t.Errorf("LISTEN_ADDR=%s: Addr() = %q, %v; want %q", listen, config.Addr(), err, want)
		}
	}
}

func TestLoadConfigNeedsPort(t *testing.T) {
	t.Setenv("PORT", "")
	_, err := LoadConfig("x")
	if err == nil || !strings.Contains(err.Error(), "PORT") {
		t.Errorf("error = %v; want one naming PORT", err)
	}
}

func TestEnvChoice(t *testing.T) {
	t.Setenv("MODE", "maybe")
	_, err := EnvChoice("MODE", "false", "false", "true")
	if err == nil || err.Error() != `MODE must be one of false, true, got "maybe"` {
		t.Errorf("error = %v", err)
	}
	t.Setenv("MODE", "")
	if value, err := EnvChoice("MODE", "false", "false", "true"); value != "false" || err != nil {
		t.Errorf("EnvChoice default = %q, %v", value, err)
	}
}
