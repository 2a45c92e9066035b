// Package caller tells the stubs and the emulator which AWS account a request is made in, and who makes it, from
// the access key it is signed with, as AWS does from the credentials: an access key made by AccessKey or
// SessionKey names its account; any other (the SDK's default test credentials, anonymous requests) is the default
// account's. A key made by SessionKey also names a role's session, which Sender gives as SQS gives a message's
// SenderId.
package caller

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"
	"sync"
)

// ServiceSender is the SenderId stamped on a message sent without credentials, which the harness sends to stand
// for an AWS service's delivery through a queue's resource policy (the hub's own rules, as EventBridge). AWS
// documents no SenderId for such a delivery; this one, like the IDs services are seen to stamp, is not a role's.
const ServiceSender = "AIDASERVICEDELIVERY0"

// Identity is the role session a key made by SessionKey belongs to.
type Identity struct {
	Account, RoleID, Session string
}

var sessions sync.Map // access key ID -> Identity

// SessionKey is an access key ID of a session named session of the role whose unique ID is roleID in account, as
// STS issues on AssumeRole (ASIA...): Account names account, and Sender the session.
func SessionKey(account, roleID, session string) string {
	sum := sha256.Sum256([]byte(roleID + ":" + session))
	key := "ASIA" + account + strings.ToUpper(hex.EncodeToString(sum[:4])) + "STUB"
	sessions.Store(key, Identity{Account: account, RoleID: roleID, Session: session})
	return key
}

// Sender is the SenderId SQS stamps on a message the request r sends ("ReceiveMessage", SenderId: for an IAM role,
// its unique ID, ":" and the session name; for a user, its user ID): a session's "<role ID>:<session>", a long-term
// key's user "AIDA<account>USER", ServiceSender for a request with no credentials or with a key that names none.
func Sender(r *http.Request) string {
	key := accessKey(r)
	if id, ok := sessions.Load(key); ok {
		i := id.(Identity)
		return i.RoleID + ":" + i.Session
	}
	if a := OfKey(key, ""); a != "" && strings.HasPrefix(key, "AKIA") {
		return "AIDA" + a + "USER"
	}
	return ServiceSender
}

// Session is the role session the request r is signed as, when its key was made by SessionKey.
func Session(r *http.Request) (Identity, bool) {
	id, ok := sessions.Load(accessKey(r))
	if !ok {
		return Identity{}, false
	}
	return id.(Identity), true
}

func accessKey(r *http.Request) string {
	auth := r.Header.Get("Authorization")
	i := strings.Index(auth, "Credential=")
	if i < 0 {
		return ""
	}
	key, _, _ := strings.Cut(auth[i+len("Credential="):], "/")
	return key
}

// AccessKey is an access key ID of account (a long-term key, AKIA..., or a session's, ASIA...).
func AccessKey(account string, session bool) string {
	if session {
		return "ASIA" + account + "STUB"
	}
	return "AKIA" + account + "STUB"
}

// Account is the account of the request's SigV4 credentials, or def.
func Account(r *http.Request, def string) string {
	key := accessKey(r)
	if key == "" {
		return def
	}
	return OfKey(key, def)
}

// OfKey is the account of access key ID key, or def.
func OfKey(key, def string) string {
	if len(key) >= 20 && (strings.HasPrefix(key, "AKIA") || strings.HasPrefix(key, "ASIA")) && strings.HasSuffix(key, "STUB") && digits(key[4:16]) {
		return key[4:16]
	}
	return def
}

func digits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
