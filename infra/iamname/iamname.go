// Package iamname names the IAM roles the stack creates, within IAM's 64 characters, and unique in the account
// whatever the region: IAM keeps role names unique per account across every region ("IAM identifiers", "Unique
// names": https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_identifiers.html), while the rest of what the
// stack declares (queues, rules, functions, schedules, log groups, EKS clusters) is named per region, so a second
// stack in another region of the account, or a second hub's baseline in a shared member account, would otherwise
// fail at create time with EntityAlreadyExists, half created.
package iamname

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/shortname"
)

// MaxRoleName is IAM's limit on a role name.
const MaxRoleName = 64

// Role is the name of the role name of region: name-region when it fits IAM's limit, and otherwise a shortened
// name that keeps its start and stays distinct for distinct names and regions (shortname.Fit).
func Role(name, region string) string {
	return shortname.Fit(name+"-"+region, MaxRoleName)
}

// OfPrefix is the name of the stack's role what (router, redrive, heartbeat, forward, reader) of region, for the
// stack whose name prefix is namePrefix. IAM does not distinguish names by case ("Names are not distinguished by
// case", CreateRole, https://docs.aws.amazon.com/IAM/latest/APIReference/API_CreateRole.html), so two hubs whose
// prefixes differ only in case (Kib and kib), in one account or sharing a member, would name one role twice: a
// prefix with an upper-case letter gets a tag of its exact spelling, which case cannot fold into another's. A
// lower-case prefix (the default, kib-<stack>) keeps its plain name.
func OfPrefix(namePrefix, what, region string) string {
	name := namePrefix + "-" + what
	if strings.ToLower(namePrefix) != namePrefix {
		sum := sha256.Sum256([]byte(namePrefix))
		name = namePrefix + "-" + hex.EncodeToString(sum[:4]) + "-" + what
	}
	return Role(name, region)
}
