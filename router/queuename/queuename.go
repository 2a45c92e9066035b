// Package queuename derives the name of a cluster's interruption queue. It is the one source of truth shared by
// the router (which forwards to the queue) and the infrastructure (which creates it): both import it.
package queuename

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
)

const (
	// MaxLen is SQS's limit on a queue name.
	MaxLen = 80
	// MaxPrefixLen keeps the prefix whole in every shortened name, so an IAM resource "<prefix>*" matches every
	// cluster queue, and leaves room for part of the cluster name.
	MaxPrefixLen = 40
	// MaxClusterLen is EKS's limit on a cluster name.
	MaxClusterLen = 100
	// hashLen hex characters of SHA-256 end a shortened name.
	hashLen = 8
)

var (
	prefixRE  = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)
	clusterRE = regexp.MustCompile(`^[0-9A-Za-z][A-Za-z0-9_-]*$`)
)

// For returns the queue name of cluster: Shorten(prefix+cluster, MaxLen). Callers validate prefix and cluster
// first.
func For(prefix, cluster string) string {
	return Shorten(prefix+cluster, MaxLen)
}

// Shorten returns name when it has at most limit characters; otherwise its first limit-9 characters, "-" and
// the first 8 hex digits of the SHA-256 of the full name, so distinct long names stay distinct, the start of
// the name is kept, and the result is the same on every call. The infrastructure names IAM roles (64) with it.
func Shorten(name string, limit int) string {
	if len(name) <= limit {
		return name
	}
	sum := sha256.Sum256([]byte(name))
	keep := limit - hashLen - 1
	return name[:keep] + "-" + hex.EncodeToString(sum[:])[:hashLen]
}

// ValidatePrefix reports why prefix cannot start queue names, or nil.
func ValidatePrefix(prefix string) error {
	switch {
	case prefix == "":
		return errors.New("must not be empty")
	case len(prefix) > MaxPrefixLen:
		return fmt.Errorf("is %d characters, at most %d are allowed", len(prefix), MaxPrefixLen)
	case !prefixRE.MatchString(prefix):
		return fmt.Errorf("%q may contain only letters, digits, '-' and '_'", prefix)
	}
	return nil
}

// ValidateCluster reports why name is not a valid EKS cluster name, or nil.
func ValidateCluster(name string) error {
	switch {
	case name == "":
		return errors.New("must not be empty")
	case len(name) > MaxClusterLen:
		return fmt.Errorf("is %d characters, at most %d are allowed", len(name), MaxClusterLen)
	case !clusterRE.MatchString(name):
		return fmt.Errorf("%q must start with a letter or digit and contain only letters, digits, '-' and '_'", name)
	}
	return nil
}
