// Package shortname fits names into AWS's length limits deterministically: the queue names the router and the
// infrastructure both derive, and the IAM role names the infrastructure gives.
package shortname

import (
	"crypto/sha256"
	"encoding/hex"
)

// hashLen hex characters of SHA-256 end a shortened name.
const hashLen = 8

// Fit returns name when it has at most limit characters; otherwise its first limit-9 characters, "-" and the
// first 8 hex digits of the SHA-256 of the full name, so distinct long names stay distinct, the start of the
// name is kept, and the result is the same on every call.
func Fit(name string, limit int) string {
	if len(name) <= limit {
		return name
	}
	sum := sha256.Sum256([]byte(name))
	keep := limit - hashLen - 1
	return name[:keep] + "-" + hex.EncodeToString(sum[:])[:hashLen]
}
