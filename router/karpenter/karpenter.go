// Package karpenter is what the bus knows of Karpenter's versions: the ones it supports and installs, and from
// which version Karpenter acts on each kind of event the bus forwards. The infrastructure (the chart version to
// install, the controller policy) and the contract tests (one module per version) read it, so adding a version is
// one change here.
package karpenter

import (
	"fmt"
	"regexp"
	"strconv"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
)

// Default is the Karpenter version (chart and controller) installed when karpenter.version is not set.
const Default = "1.14.1"

// Oldest and Newest bound the versions the bus supports: every patch of the minor versions between them, both
// included. Each end is tested against that version's own parser, chart and policy (tests/karpenter/).
var (
	Oldest = Version{Major: 1, Minor: 6, Patch: 0}
	Newest = Version{Major: 1, Minor: 14}
)

// Range describes the supported versions for messages.
func Range() string { return fmt.Sprintf("%s to %d.%d.x", Oldest, Newest.Major, Newest.Minor) }

// Version is a Karpenter release, as its chart is versioned.
type Version struct {
	Major, Minor, Patch int
	// Pre is a pre-release suffix ("rc.1"), if any.
	Pre string
}

var versionRE = regexp.MustCompile(`^v?([0-9]+)\.([0-9]+)\.([0-9]+)(?:-([0-9A-Za-z.-]+))?$`)

// Parse reads a version such as 1.14.1 (a leading v is accepted).
func Parse(s string) (Version, error) {
	m := versionRE.FindStringSubmatch(s)
	if m == nil {
		return Version{}, fmt.Errorf("%q is not a version such as %s", s, Default)
	}
	n := func(x string) int { v, _ := strconv.Atoi(x); return v }
	return Version{Major: n(m[1]), Minor: n(m[2]), Patch: n(m[3]), Pre: m[4]}, nil
}

func (v Version) String() string {
	s := fmt.Sprintf("%d.%d.%d", v.Major, v.Minor, v.Patch)
	if v.Pre != "" {
		s += "-" + v.Pre
	}
	return s
}

// AtLeast reports whether v is major.minor or later (any patch, pre-releases of major.minor.0 included).
func (v Version) AtLeast(major, minor int) bool {
	return v.Major > major || v.Major == major && v.Minor >= minor
}

// Supported reports whether the bus supports v: from Oldest to any patch of Newest's minor version.
func (v Version) Supported() bool {
	return v.AtLeast(Oldest.Major, Oldest.Minor) && (v.Major < Newest.Major || v.Major == Newest.Major && v.Minor <= Newest.Minor)
}

// actsFrom is the first minor version whose interruption controller parses each kind; kinds not listed are
// parsed by every supported version.
var actsFrom = map[contract.Kind][2]int{
	contract.KindCapacityReservationInterruption: {1, 10}, // messages/capacityreservationinterruption
}

// Acts reports whether Karpenter v acts on events of kind; otherwise its parser takes them for no-ops (and it
// deletes them), as it does every kind it does not know, such as KindOtherEC2.
func Acts(v Version, kind contract.Kind) bool {
	if kind == contract.KindOtherEC2 || kind == contract.KindUnknown || kind == contract.KindCanary {
		return false // no Karpenter has a parser for them (a canary is the bus's own)
	}
	from, ok := actsFrom[kind]
	return !ok || v.AtLeast(from[0], from[1])
}
