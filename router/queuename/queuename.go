// Package queuename derives the name of a cluster's interruption queue. It is the one source of truth shared by
// the router (which forwards to the queue) and the infrastructure (which creates it): both import it.
//
// Cluster queues are "<namePrefix>_<cluster>", the stack's shared resources "<namePrefix>-<what>", and a name
// prefix may not contain "_". So the first "_" of a cluster queue's name ends its stack's name prefix: no cluster
// queue can be named as a shared queue, or as a queue of another stack, whatever the cluster is called, and the
// router's grant on "<namePrefix>_*" covers its own stack's cluster queues only.
package queuename

import (
	"errors"
	"fmt"
	"regexp"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/shortname"
)

const (
	// MaxLen is SQS's limit on a queue name.
	MaxLen = 80
	// MaxPrefixLen keeps the prefix whole in every shortened name, so an IAM resource "<prefix>*" matches every
	// cluster queue, and leaves room for part of the cluster name: a name prefix of 40 and the separator.
	MaxPrefixLen = 41
	// Separator ends a cluster queue prefix; no name prefix contains it.
	Separator = "_"
	// MaxClusterLen is EKS's limit on a cluster name.
	MaxClusterLen = 100
)

var (
	prefixRE  = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9-]*_$`)
	clusterRE = regexp.MustCompile(`^[0-9A-Za-z][A-Za-z0-9_-]*$`)
)

// Prefix is the cluster queue prefix of the stack whose shared resources are named "<namePrefix>-...".
func Prefix(namePrefix string) string { return namePrefix + Separator }

// For returns the queue name of cluster: prefix+cluster, fitted into SQS's 80 characters by shortname.Fit
// (which keeps the prefix whole). Callers validate prefix and cluster first.
func For(prefix, cluster string) string {
	return shortname.Fit(prefix+cluster, MaxLen)
}

// ValidatePrefix reports why prefix cannot start queue names, or nil.
func ValidatePrefix(prefix string) error {
	switch {
	case prefix == "":
		return errors.New("must not be empty")
	case len(prefix) > MaxPrefixLen:
		return fmt.Errorf("is %d characters, at most %d are allowed", len(prefix), MaxPrefixLen)
	case !prefixRE.MatchString(prefix):
		return fmt.Errorf("%q must be a name prefix (a letter or digit, then letters, digits and '-') followed by %q", prefix, Separator)
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
