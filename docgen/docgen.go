// Package docgen writes the parts of the documentation that are facts of the code, so they cannot drift from it:
// each is a block of Markdown between <!-- generated:NAME --> and <!-- /generated:NAME --> in a document, written
// by make docs and checked by a test that fails when a committed document differs from what the code says.
package docgen

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// Block is one generated part: its name and its Markdown.
type Block struct {
	Name     string
	Markdown func() (string, error)
}

// Blocks are every generated part, by name.
var Blocks = []Block{
	{Name: "karpenter-versions", Markdown: always(KarpenterVersions)},
	{Name: "karpenter-support", Markdown: always(KarpenterSupport)},
	{Name: "quotas", Markdown: Quotas},
	{Name: "alarms", Markdown: always(Alarms)},
	{Name: "make-targets", Markdown: MakeTargets},
	{Name: "config-reference", Markdown: ConfigReference},
	{Name: "metrics", Markdown: always(Metrics)},
	{Name: "heartbeat-alarm", Markdown: always(HeartbeatAlarm)},
	{Name: "package-reference", Markdown: PackageReference},
	{Name: "sizing", Markdown: always(Sizing)},
}

func always(f func() string) func() (string, error) {
	return func() (string, error) { return f(), nil }
}

var markerRE = regexp.MustCompile(`(?s)(<!-- generated:([a-z0-9-]+) -->\n)(.*?)([ \t]*<!-- /generated:([a-z0-9-]+) -->)`)

// Apply replaces, in a document's text, every generated block with what the code says now. A marker naming no
// block, or an unclosed block, is an error.
func Apply(text string) (string, error) {
	var errs []string
	out := markerRE.ReplaceAllStringFunc(text, func(m string) string {
		g := markerRE.FindStringSubmatch(m)
		if g[2] != g[5] {
			errs = append(errs, fmt.Sprintf("block %s is closed by %s", g[2], g[5]))
			return m
		}
		i := slices.IndexFunc(Blocks, func(b Block) bool { return b.Name == g[2] })
		if i < 0 {
			errs = append(errs, fmt.Sprintf("no generated block is named %s", g[2]))
			return m
		}
		md, err := Blocks[i].Markdown()
		if err != nil {
			errs = append(errs, fmt.Sprintf("block %s: %v", g[2], err))
			return m
		}
		return g[1] + strings.TrimRight(md, "\n") + "\n" + g[4]
	})
	if opened, closed := strings.Count(text, "<!-- generated:"), strings.Count(text, "<!-- /generated:"); opened != closed {
		errs = append(errs, fmt.Sprintf("%d blocks opened, %d closed", opened, closed))
	}
	if len(errs) > 0 {
		return "", fmt.Errorf("generated blocks: %s", strings.Join(errs, "; "))
	}
	return out, nil
}

// Documents are the project's Markdown documents, relative to root: README.md and everything under docs/.
func Documents(root string) ([]string, error) {
	out := []string{"README.md"}
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(path string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return filepath.SkipDir
		}
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(path, ".md") {
			rel, _ := filepath.Rel(root, path)
			out = append(out, rel)
		}
		return nil
	})
	return out, err
}
