package contract

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"testing"
	"testing/iotest"
)

func assertEmptyDir(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 0 {
		t.Errorf("%s still holds %d files, first %s", dir, len(entries), entries[0].Name())
	}
}

func TestStoreUploadHashesAndRemovesTheFile(t *testing.T) {
	dir := t.TempDir()
	body := bytes.Repeat([]byte("corobench"), 100_000)
	result, err := StoreUpload(dir, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(body)
	if result.Bytes != int64(len(body)) || result.SHA256 != hex.EncodeToString(sum[:]) {
		t.Errorf("StoreUpload = %+v; want %d bytes, sha256 %x", result, len(body), sum)
	}
	assertEmptyDir(t, dir)
}

func TestStoreUploadOfNothing(t *testing.T) {
	result, err := StoreUpload(t.TempDir(), bytes.NewReader(nil))
	want := "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
	if err != nil || result.Bytes != 0 || result.SHA256 != want {
		t.Errorf("StoreUpload(empty) = %+v, %v; want 0 bytes, %s", result, err, want)
	}
}

func TestStoreUploadRefusesMoreThanTheLimit(t *testing.T) {
	dir := t.TempDir()
	tooLong := io.LimitReader(zeroReader{}, MaxUploadBytes+1)
	_, err := StoreUpload(dir, tooLong)
	if !errors.Is(err, ErrUploadTooLarge) {
		t.Errorf("error = %v; want ErrUploadTooLarge", err)
	}
	assertEmptyDir(t, dir)
}

func TestStoreUploadTellsABrokenBodyApart(t *testing.T) {
	dir := t.TempDir()
	broken := io.MultiReader(bytes.NewReader([]byte("part")), iotest.ErrReader(io.ErrUnexpectedEOF))
	_, err := StoreUpload(dir, broken)
	var readErr *BodyReadError
	if !errors.As(err, &readErr) || !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("error = %v; want a BodyReadError wrapping ErrUnexpectedEOF", err)
	}
	assertEmptyDir(t, dir)
}

func TestNewUploadSinkNamesAMissingDirectory(t *testing.T) {
	_, err := NewUploadSink("/nonexistent/upload/dir")
	if err == nil || !bytes.Contains([]byte(err.Error()), []byte("UPLOAD_DIR")) {
		t.Errorf("error %v does not name UPLOAD_DIR", err)
	}
}

type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}
