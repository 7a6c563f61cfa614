package contract

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
)

// MaxUploadBytes is the largest body POST /upload accepts (64 MiB); a
// larger Content-Length is answered 413 without reading the body.
const MaxUploadBytes = 64 << 20

// UploadResult is the body of a successful /upload answer.
type UploadResult struct {
	Bytes  int64  `json:"bytes"`
	SHA256 string `json:"sha256"`
}

// UploadSink receives an upload body piece by piece, writing it to a
// temporary file in UPLOAD_DIR while hashing it, so that no body is ever
// held whole in memory.
type UploadSink struct {
	file    *os.File
	hasher  hash.Hash
	written int64
}

// NewUploadSink creates the temporary file for one upload.
func NewUploadSink(uploadDir string) (*UploadSink, error) {
	file, err := os.CreateTemp(uploadDir, "upload-*.tmp")
	if err != nil {
		return nil, fmt.Errorf("cannot create a temporary file in UPLOAD_DIR %q: %w", uploadDir, err)
	}
	return &UploadSink{file: file, hasher: sha256.New()}, nil
}

// Write appends a piece of the body to the file and to the hash.
func (s *UploadSink) Write(piece []byte) (int, error) {
	n, err := s.file.Write(piece)
	s.hasher.Write(piece[:n])
	s.written += int64(n)
	if err != nil {
		return n, fmt.Errorf("cannot write the upload to %s: %w", s.file.Name(), err)
	}
	return n, nil
}

// Finish closes and removes the temporary file and returns what was
// received. The file goes before the answer is sent, so a client that has
// its answer never finds a leftover file in UPLOAD_DIR.
func (s *UploadSink) Finish() (UploadResult, error) {
	closeErr := s.file.Close()
	removeErr := os.Remove(s.file.Name())
	if err := errors.Join(closeErr, removeErr); err != nil {
		return UploadResult{}, fmt.Errorf("cannot close or remove the upload file: %w", err)
	}
	return UploadResult{Bytes: s.written, SHA256: hex.EncodeToString(s.hasher.Sum(nil))}, nil
}

// Abort closes and removes the temporary file of an upload that will not
// complete (the client went away or the server is stopping).
func (s *UploadSink) Abort() {
	_ = s.file.Close()
	_ = os.Remove(s.file.Name())
}

// ErrUploadTooLarge means a body without a declared length grew beyond
// MaxUploadBytes while it was read.
var ErrUploadTooLarge = fmt.Errorf("upload body exceeds %d bytes", MaxUploadBytes)

// BodyReadError is a failure to receive the body from the client (as
// opposed to a failure to store it), which is the client's fault: 400.
type BodyReadError struct {
	Err error
}

func (e *BodyReadError) Error() string {
	return fmt.Sprintf("the upload body could not be read: %v", e.Err)
}

func (e *BodyReadError) Unwrap() error { return e.Err }

type bodyReader struct {
	body io.Reader
}

func (r bodyReader) Read(p []byte) (int, error) {
	n, err := r.body.Read(p)
	if err != nil && err != io.EOF {
		err = &BodyReadError{Err: err}
	}
	return n, err
}

// StoreUpload streams a whole body into a new sink and finishes it. At most
// MaxUploadBytes are accepted; a longer body yields ErrUploadTooLarge, a
// body that breaks off a *BodyReadError.
func StoreUpload(uploadDir string, body io.Reader) (UploadResult, error) {
	sink, err := NewUploadSink(uploadDir)
	if err != nil {
		return UploadResult{}, err
	}
	copied, err := io.Copy(sink, io.LimitReader(bodyReader{body}, MaxUploadBytes+1))
	if err == nil && copied > MaxUploadBytes {
		err = ErrUploadTooLarge
	}
	if err != nil {
		sink.Abort()
		return UploadResult{}, err
	}
	return sink.Finish()
}
