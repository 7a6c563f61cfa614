package contract

import (
	"fmt"
	"log"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Config is what every Go target reads from its environment (see the
// process section of docs/contract.md).
type Config struct {
	Listen      string
	Port        int
	Name        string
	DataDir     string
	UploadDir   string
	DatabaseURL string
	DBPoolSize  int
	// Protocol is what the trial speaks (HTTP_PROTOCOL, TLS_CERT, TLS_KEY).
	Protocol Protocol
}

// Addr is the address the target listens on: LISTEN_ADDR (127.0.0.1 by
// default) and PORT.
func (c Config) Addr() string {
	return net.JoinHostPort(c.Listen, strconv.Itoa(c.Port))
}

// listenAddr reads LISTEN_ADDR: an IP address, 127.0.0.1 when unset.
func listenAddr() (string, error) {
	raw := strings.TrimSpace(os.Getenv("LISTEN_ADDR"))
	if raw == "" {
		return "127.0.0.1", nil
	}
	if net.ParseIP(raw) == nil {
		return "", fmt.Errorf("LISTEN_ADDR must be an IP address such as 127.0.0.1 or 0.0.0.0, got %q", raw)
	}
	return raw, nil
}

// LoadConfig reads the environment. PORT is required; TARGET_NAME falls
// back to defaultName, DATA_DIR to the working directory and UPLOAD_DIR to
// the system temporary directory, so the server can also be run by hand.
// GOMAXPROCS is applied by the Go runtime itself, which silently ignores a
// bad value, so it is checked here to fail loudly instead.
func LoadConfig(defaultName string) (Config, error) {
	rawPort, ok := os.LookupEnv("PORT")
	if !ok {
		return Config{}, fmt.Errorf("PORT is not set: set it to the TCP port to listen on (1..=65535)")
	}
	port, err := strconv.Atoi(strings.TrimSpace(rawPort))
	if err != nil || port < 1 || port > 65535 {
		return Config{}, fmt.Errorf("PORT must be a TCP port in 1..=65535, got %q", rawPort)
	}
	if _, err := EnvInt("GOMAXPROCS", 1, 1, 256); err != nil {
		return Config{}, err
	}
	dbPoolSize, err := EnvInt("DB_POOL", 16, 1, 1024)
	if err != nil {
		return Config{}, err
	}
	listen, err := listenAddr()
	if err != nil {
		return Config{}, err
	}
	protocol, err := loadProtocol()
	if err != nil {
		return Config{}, err
	}
	return Config{
		Listen:      listen,
		Port:        port,
		Name:        envOr("TARGET_NAME", defaultName),
		DataDir:     envOr("DATA_DIR", "."),
		UploadDir:   envOr("UPLOAD_DIR", os.TempDir()),
		DatabaseURL: os.Getenv("DATABASE_URL"),
		DBPoolSize:  dbPoolSize,
		Protocol:    protocol,
	}, nil
}

// StopBudget bounds a graceful stop: after SIGTERM, requests in flight
// get this long before connections are closed, well inside the contract's
// 5 seconds.
const StopBudget = 3 * time.Second

// MustLoadConfig is LoadConfig for a main function: a bad environment ends
// the process with exit code 2 and a message saying what to fix, and
// directories that would fail later are logged.
func MustLoadConfig(defaultName string) Config {
	config, err := LoadConfig(defaultName)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", defaultName, err)
		os.Exit(2)
	}
	for _, problem := range config.CheckDirs() {
		log.Printf("%s: warning: %s", config.Name, problem)
	}
	return config
}

func envOr(name, fallback string) string {
	if value := os.Getenv(name); value != "" {
		return value
	}
	return fallback
}

// EnvInt reads an integer variable in min..=max; unset or empty means def.
func EnvInt(name string, def, min, max int) (int, error) {
	raw := os.Getenv(name)
	if raw == "" {
		return def, nil
	}
	value, err := strconv.Atoi(strings.TrimSpace(raw))
	if err != nil || value < min || value > max {
		return 0, fmt.Errorf("%s must be an integer in %d..=%d, got %q", name, min, max, raw)
	}
	return value, nil
}

// EnvChoice reads a variable that must be one of choices; unset or empty
// means def.
func EnvChoice(name, def string, choices ...string) (string, error) {
	raw := os.Getenv(name)
	if raw == "" {
		return def, nil
	}
	if !slices.Contains(choices, raw) {
		return "", fmt.Errorf("%s must be one of %s, got %q", name, strings.Join(choices, ", "), raw)
	}
	return raw, nil
}

// CheckDirs reports, without failing, directories that would make /file or
// /upload fail later, so that a misconfigured run is visible in the log.
func (c Config) CheckDirs() []string {
	var problems []string
	if _, err := os.Stat(c.DataDir + "/" + PayloadFileName); err != nil {
		problems = append(problems, fmt.Sprintf("DATA_DIR %q has no readable %s: /file will answer 500 (%v)", c.DataDir, PayloadFileName, err))
	}
	if info, err := os.Stat(c.UploadDir); err != nil || !info.IsDir() {
		problems = append(problems, fmt.Sprintf("UPLOAD_DIR %q is not a directory: /upload will answer 500", c.UploadDir))
	}
	return problems
}
