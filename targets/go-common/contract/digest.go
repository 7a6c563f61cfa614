package contract

import (
	"crypto/sha256"
	"encoding/hex"
)

// ChainDigest computes the /mixed CPU work: h0 is 32 zero bytes and
// h(k+1) = SHA-256(h(k)); it returns the lower-case hex of h(iters).
func ChainDigest(iters int) string {
	var digest [sha256.Size]byte
	for range iters {
		digest = sha256.Sum256(digest[:])
	}
	return hex.EncodeToString(digest[:])
}
