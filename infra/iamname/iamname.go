// Package iamname names the IAM roles the stack creates, within IAM's 64 characters.
package iamname

import "github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/shortname"

// MaxRoleName is IAM's limit on a role name.
const MaxRoleName = 64

// Role returns name when it fits IAM's limit, and otherwise a shortened name that keeps its start and stays
// distinct for distinct names (shortname.Fit).
func Role(name string) string {
	return shortname.Fit(name, MaxRoleName)
}
