// Package caller tells the stubs and the emulator which AWS account a request is made in, from the access key
// it is signed with, as AWS does from the credentials: an access key made by AccessKey names its account; any
// other (the SDK's default test credentials, anonymous requests) is the default account's.
package caller

import (
	"net/http"
	"strings"
)

// AccessKey is an access key ID of account (a long-term key, AKIA..., or a session's, ASIA...).
func AccessKey(account string, session bool) string {
	if session {
		return "ASIA" + account + "STUB"
	}
	return "AKIA" + account + "STUB"
}

// Account is the account of the request's SigV4 credentials, or def.
func Account(r *http.Request, def string) string {
	auth := r.Header.Get("Authorization")
	i := strings.Index(auth, "Credential=")
	if i < 0 {
		return def
	}
	key, _, _ := strings.Cut(auth[i+len("Credential="):], "/")
	return OfKey(key, def)
}

// OfKey is the account of access key ID key, or def.
func OfKey(key, def string) string {
	if len(key) == 20 && (strings.HasPrefix(key, "AKIA") || strings.HasPrefix(key, "ASIA")) && strings.HasSuffix(key, "STUB") {
		return key[4:16]
	}
	return def
}
