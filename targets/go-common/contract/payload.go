package contract

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// PayloadFileName is the file in DATA_DIR that /file serves.
const PayloadFileName = "payload.bin"

// PayloadModulus defines payload.bin's content: the byte at offset i is
// i mod PayloadModulus.
const PayloadModulus = 251

// ReadPayload reads the first kb × 1024 bytes of DATA_DIR/payload.bin from
// the file, every call: the contract forbids keeping a copy in memory
// between requests.
func ReadPayload(dataDir string, kb int) ([]byte, error) {
	path := filepath.Join(dataDir, PayloadFileName)
	file, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("cannot open %s (DATA_DIR must hold %s): %w", path, PayloadFileName, err)
	}
	defer file.Close()
	payload := make([]byte, kb*1024)
	if _, err := io.ReadFull(file, payload); err != nil {
		return nil, fmt.Errorf("cannot read %d bytes from %s (is it shorter than 10 MiB?): %w", len(payload), path, err)
	}
	return payload, nil
}
