package docgen

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/text"
)

// markdown parses documents as GitHub renders them (tables and autolinks included), with goldmark, a CommonMark
// parser: links inside code are not links, and a heading's text is what its anchor is made from.
var markdown = goldmark.New(goldmark.WithExtensions(extension.GFM))

// Document is what a Markdown document offers to links and what it links to.
type Document struct {
	Anchors map[string]bool // the anchors of its headings, as GitHub makes them
	Links   []string        // every link and image destination, in order
}

// Read parses the Markdown source of a document.
func Read(source []byte) Document {
	doc := Document{Anchors: map[string]bool{}}
	seen := map[string]int{}
	root := markdown.Parser().Parse(text.NewReader(source))
	_ = ast.Walk(root, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *ast.Heading:
			a := Anchor(plain(n, source))
			if k := seen[a]; k > 0 {
				doc.Anchors[fmt.Sprintf("%s-%d", a, k)] = true
			} else {
				doc.Anchors[a] = true
			}
			seen[a]++
		case *ast.Link:
			doc.Links = append(doc.Links, string(n.Destination))
		case *ast.Image:
			doc.Links = append(doc.Links, string(n.Destination))
		}
		return ast.WalkContinue, nil
	})
	// An anchor of its own: <a id="name"></a> in the text.
	for _, m := range htmlAnchorRE.FindAllSubmatch(source, -1) {
		doc.Anchors[string(m[1])] = true
	}
	return doc
}

var htmlAnchorRE = regexp.MustCompile(`<a (?:id|name)="([^"]+)"`)

// plain is a node's text without its markup (a heading's `code` and links keep their words).
func plain(n ast.Node, source []byte) string {
	var b strings.Builder
	_ = ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch c := c.(type) {
		case *ast.Text:
			b.Write(c.Segment.Value(source))
		case *ast.String:
			b.Write(c.Value)
		}
		return ast.WalkContinue, nil
	})
	return b.String()
}

// Anchor is the anchor GitHub gives a heading of text: lower case, letters, digits, spaces, hyphens and
// underscores kept, spaces made hyphens, everything else dropped (a repeated heading gets -1, -2: Read).
func Anchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// BrokenLinks checks every relative link of the documents under root (README.md and docs/): the file it names
// exists, and so does the anchor it names, in that file or in the document itself. Links to other sites are
// not followed.
func BrokenLinks(root string) ([]string, error) {
	files, err := Documents(root)
	if err != nil {
		return nil, err
	}
	docs := map[string]Document{}
	for _, f := range files {
		src, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			return nil, err
		}
		docs[filepath.ToSlash(f)] = Read(src)
	}
	var broken []string
	for _, f := range slices.Sorted(maps.Keys(docs)) {
		for _, link := range docs[f].Links {
			if problem := check(root, f, link, docs); problem != "" {
				broken = append(broken, fmt.Sprintf("%s: %s: %s", f, link, problem))
			}
		}
	}
	return broken, nil
}

func check(root, from, link string, docs map[string]Document) string {
	u, err := url.Parse(link)
	if err != nil {
		return "not a link: " + err.Error()
	}
	if u.Scheme != "" || strings.HasPrefix(link, "//") {
		return "" // another site
	}
	target := from
	if u.Path != "" {
		target = filepath.ToSlash(filepath.Join(filepath.Dir(from), u.Path))
		if strings.HasPrefix(target, "../") {
			return "outside the repository"
		}
		if _, err := os.Stat(filepath.Join(root, target)); err != nil {
			return "no such file"
		}
	}
	if u.Fragment == "" {
		return ""
	}
	doc, ok := docs[target]
	if !ok {
		if strings.HasSuffix(target, ".md") {
			return "an anchor in a document that is not checked"
		}
		return "" // a line anchor in source (#L10) is GitHub's
	}
	if !doc.Anchors[u.Fragment] {
		return "no heading has the anchor #" + u.Fragment
	}
	return ""
}

// Diagram is a mermaid block of a document.
type Diagram struct {
	Where string `json:"where"` // document:line
	Text  string `json:"text"`
}

// Diagrams are the mermaid blocks (```mermaid) of the documents under root.
func Diagrams(root string) ([]Diagram, error) {
	files, err := Documents(root)
	if err != nil {
		return nil, err
	}
	var out []Diagram
	for _, f := range files {
		src, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			return nil, err
		}
		out = append(out, diagramsOf(filepath.ToSlash(f), src)...)
	}
	return out, nil
}

func diagramsOf(name string, source []byte) []Diagram {
	var out []Diagram
	root := markdown.Parser().Parse(text.NewReader(source))
	_ = ast.Walk(root, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		block, ok := n.(*ast.FencedCodeBlock)
		if !entering || !ok || string(block.Language(source)) != "mermaid" {
			return ast.WalkContinue, nil
		}
		var b strings.Builder
		lines := block.Lines()
		for i := range lines.Len() {
			seg := lines.At(i)
			b.Write(seg.Value(source))
		}
		line := 1
		if lines.Len() > 0 {
			line = strings.Count(string(source[:lines.At(0).Start]), "\n") + 1
		}
		out = append(out, Diagram{Where: fmt.Sprintf("%s:%d", name, line), Text: b.String()})
		return ast.WalkSkipChildren, nil
	})
	return out
}

// MermaidProblem is a diagram mermaid's parser refuses, and why.
type MermaidProblem struct {
	Where string `json:"where"`
	Error string `json:"error"`
}

// ParseMermaid has mermaid's own parser (docgen/mermaid/parse.mjs, its packages installed there by npm ci from
// the lockfile) read each diagram, and returns those it refuses.
func ParseMermaid(ctx context.Context, dir string, diagrams []Diagram) ([]MermaidProblem, error) {
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "mermaid")); err != nil {
		return nil, fmt.Errorf("mermaid is not installed in %s: make test runs npm ci there", dir)
	}
	in, err := json.Marshal(diagrams)
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, "node", "parse.mjs")
	cmd.Dir, cmd.Stdin = dir, bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("node parse.mjs: %w: %s", err, stderr.String())
	}
	var problems []MermaidProblem
	if err := json.Unmarshal(out, &problems); err != nil {
		return nil, fmt.Errorf("node parse.mjs said %q: %w", out, err)
	}
	return problems, nil
}
