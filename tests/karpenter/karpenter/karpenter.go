// Package karpenter reads messages exactly as Karpenter's interruption controller does, with its own parser, so
// tests check what the bus forwards against the consumer itself. Which Karpenter: the one the importing module
// pins (the end-to-end tests and the demo: the version the stack installs by default; each module under
// tests/karpenter/ pins its own).
package karpenter

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/aws/karpenter-provider-aws/pkg/controllers/interruption"
)

// Module is Karpenter's Go module, which also holds its chart (charts/karpenter).
const Module = "github.com/aws/karpenter-provider-aws"

var parser = interruption.NewEventParser(interruption.DefaultParsers...)

// Parsed is what Karpenter makes of a message: its kind (e.g. "spot_interrupted", "no_op") and instances.
type Parsed struct {
	Kind        string
	InstanceIDs []string
}

// Parse returns Karpenter's reading of body; an error is what Karpenter would log before deleting it.
func Parse(body string) (Parsed, error) {
	msg, err := parser.Parse(body)
	if err != nil {
		return Parsed{}, err
	}
	ids := slices.Clone(msg.EC2InstanceIDs())
	slices.Sort(ids)
	return Parsed{Kind: string(msg.Kind()), InstanceIDs: ids}, nil
}

// ParserKey is what Karpenter keys a parser by.
type ParserKey struct{ Version, Source, DetailType string }

// Parsers are the keys of Karpenter's DefaultParsers: the events it acts on.
func Parsers() []ParserKey {
	var out []ParserKey
	for _, p := range interruption.DefaultParsers {
		out = append(out, ParserKey{p.Version(), p.Source(), p.DetailType()})
	}
	return out
}

// Pinned is the version of Karpenter's module the go.mod of the directory dir pins (without its "v"), and where
// Go keeps it (its source, its chart). A test binary carries no module versions, so the go command says.
func Pinned(dir string) (version, moduleDir string, err error) {
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Version}} {{.Dir}}", Module)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return "", "", fmt.Errorf("locating %s: %w", Module, err)
	}
	version, moduleDir, ok := strings.Cut(strings.TrimSpace(string(out)), " ")
	if !ok || moduleDir == "" {
		return "", "", fmt.Errorf("locating %s: go list says %q", Module, out)
	}
	return strings.TrimPrefix(version, "v"), moduleDir, nil
}

// ChartDir is Karpenter's chart in its module (its Chart.yaml's version is stamped at release: the templates are
// the module version's).
func ChartDir(moduleDir string) string { return filepath.Join(moduleDir, "charts", "karpenter") }
