package contract

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writePayload writes a payload.bin of size bytes whose byte i is i mod 251.
func writePayload(t *testing.T, size int) string {
	t.Helper()
	dir := t.TempDir()
	content := make([]byte, size)
	for i := range content {
		content[i] = byte(i % PayloadModulus)
	}
	if err := os.WriteFile(filepath.Join(dir, PayloadFileName), content, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestReadPayloadReturnsTheFirstKilobytes(t *testing.T) {
	dir := writePayload(t, 10*1024*1024)
	for _, kb := range []int{1, 3, 10240} {
		payload, err := ReadPayload(dir, kb)
		if err != nil {
			t.Fatalf("ReadPayload(%d): %v", kb, err)
		}
		if len(payload) != kb*1024 {
			t.Fatalf("ReadPayload(%d) returned %d bytes", kb, len(payload))
		}
		for i, b := range payload {
			if b != byte(i%PayloadModulus) {
				t.Fatalf("ReadPayload(%d): byte %d is %d; want %d", kb, i, b, i%PayloadModulus)
			}
		}
	}
	if payload, _ := ReadPayload(dir, 1); payload[250] != 250 || payload[251] != 0 || payload[1023] != 1023%251 {
		t.Errorf("payload wraps wrongly: %d %d %d", payload[250], payload[251], payload[1023])
	}
}

func TestReadPayloadNamesTheMissingFile(t *testing.T) {
	dir := t.TempDir()
	_, err := ReadPayload(dir, 1)
	if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, PayloadFileName)) {
		t.Errorf("error %v does not name the missing file", err)
	}
}

func TestReadPayloadRejectsAShortFile(t *testing.T) {
	dir := writePayload(t, 1000)
	_, err := ReadPayload(dir, 1)
	if err == nil || !strings.Contains(err.Error(), "1024 bytes") {
		t.Errorf("error %v does not say how many bytes were wanted", err)
	}
}
