// Package karpenter is what the bus knows of Karpenter's versions: the ones it supports and installs, and from
// which version Karpenter acts on each kind of event the bus forwards. The infrastructure (the chart version to
// install, the controller policy) and the contract tests (one module per version) read it, so adding a version is
// one change here.
package karpenter

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
)

// Default is the Karpenter version (chart and controller) installed when karpenter.version is not set.
const Default = "1.15.1"

// Oldest and Newest bound the versions the bus supports: every patch of the minor versions between them, both
// included. Each end is tested against that version's own parser, chart and policy (tests/karpenter/).
var (
	Oldest = Version{Major: 1, Minor: 6, Patch: 0}
	Newest = Version{Major: 1, Minor: 15}
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

// Compare orders versions: negative when v is older than w, zero when equal, positive when newer. A pre-release
// is older than its release.
func (v Version) Compare(w Version) int {
	for _, d := range []int{v.Major - w.Major, v.Minor - w.Minor, v.Patch - w.Patch} {
		if d != 0 {
			return d
		}
	}
	switch {
	case v.Pre == w.Pre:
		return 0
	case v.Pre == "":
		return 1
	case w.Pre == "":
		return -1
	}
	return strings.Compare(v.Pre, w.Pre)
}

// KubernetesRange is the Kubernetes minor versions (1.Min to 1.Max) a Karpenter release runs on: outside it, its
// controller refuses the cluster ("karpenter is not compatible with kubernetes version").
type KubernetesRange struct{ Min, Max int }

func (r KubernetesRange) String() string { return fmt.Sprintf("1.%d to 1.%d", r.Min, r.Max) }

// Contains reports whether the Kubernetes version k ("1.33", or "1.33.4") is within r.
func (r KubernetesRange) Contains(k string) (bool, error) {
	minor, err := KubernetesMinor(k)
	if err != nil {
		return false, err
	}
	return minor >= r.Min && minor <= r.Max, nil
}

var kubernetesRE = regexp.MustCompile(`^v?1\.([0-9]+)(?:\.[0-9]+)?$`)

// KubernetesMinor is the minor number of a Kubernetes 1.x version such as "1.33" (EKS's form).
func KubernetesMinor(k string) (int, error) {
	m := kubernetesRE.FindStringSubmatch(k)
	if m == nil {
		return 0, fmt.Errorf("%q is not a Kubernetes version such as 1.33", k)
	}
	n, _ := strconv.Atoi(m[1])
	return n, nil
}

// kubernetes is Karpenter's compatibility matrix: from each release on, the Kubernetes versions it runs on, until
// the next entry. The bounds are Karpenter's own MinK8sVersion and MaxK8sVersion (pkg/providers/version/version.go
// of github.com/aws/karpenter-provider-aws), read at every release tag from v1.6.0 to v1.15.1: a later patch may
// raise the maximum (1.6.6 and 1.7.4 took 1.34), which is why Karpenter's published matrix, per minor version
// (website/.../upgrading/compatibility.md), can name a Kubernetes version an early patch refuses. Each version
// module under tests/karpenter/ checks its entry against that version's source.
var kubernetes = []struct {
	from Version
	k8s  KubernetesRange
}{
	{Version{Major: 1, Minor: 6}, KubernetesRange{26, 33}},
	{Version{Major: 1, Minor: 6, Patch: 6}, KubernetesRange{26, 34}},
	{Version{Major: 1, Minor: 7}, KubernetesRange{26, 33}},
	{Version{Major: 1, Minor: 7, Patch: 4}, KubernetesRange{26, 34}},
	{Version{Major: 1, Minor: 8}, KubernetesRange{26, 34}},
	{Version{Major: 1, Minor: 9}, KubernetesRange{26, 35}},
	{Version{Major: 1, Minor: 13}, KubernetesRange{26, 36}},
	{Version{Major: 1, Minor: 15}, KubernetesRange{26, 37}},
}

// Kubernetes is the range of Kubernetes versions Karpenter v runs on; false for a version the bus does not
// support.
func (v Version) Kubernetes() (KubernetesRange, bool) {
	if !v.Supported() {
		return KubernetesRange{}, false
	}
	var out KubernetesRange
	for _, e := range kubernetes {
		release := v
		release.Pre = "" // a release candidate runs where its release does
		if release.Compare(e.from) >= 0 {
			out = e.k8s
		}
	}
	return out, true
}

// Compatibility is one row of the compatibility matrix: from release From on (until the next row), Karpenter runs
// on Kubernetes Range.
type Compatibility struct {
	From  Version
	Range KubernetesRange
}

// Matrix is the compatibility matrix, oldest first.
func Matrix() []Compatibility {
	out := make([]Compatibility, len(kubernetes))
	for i, e := range kubernetes {
		out[i] = Compatibility{From: e.from, Range: e.k8s}
	}
	return out
}

// Minors are the first release of every minor version the bus supports, oldest first.
func Minors() []Version {
	var out []Version
	for v := (Version{Major: Oldest.Major, Minor: Oldest.Minor}); v.Supported(); v.Minor++ {
		out = append(out, v)
	}
	return out
}
