package docgen

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// makeRE is the first line of a target's description in the Makefile: "## name: what it does".
var makeRE = regexp.MustCompile(`^## ([a-z0-9-]+): (.*)$`)

// markdownText escapes what Markdown would take for a table's cell end or an HTML tag.
var markdownText = strings.NewReplacer("|", "\\|", "<", "&lt;", ">", "&gt;")

// MakeTargets is the table of the Makefile's documented targets, from their "## name: ..." comments.
func MakeTargets() (string, error) {
	root, err := repoRoot()
	if err != nil {
		return "", err
	}
	{
		f, err := os.Open(filepath.Join(root, "Makefile"))
		if err != nil {
			return "", err
		}
		defer func() { _ = f.Close() }()
		var b strings.Builder
		b.WriteString("| target | what it does |\n|---|---|\n")
		var name string
		var text []string
		flush := func() {
			if name != "" {
				fmt.Fprintf(&b, "| `make %s` | %s |\n", name, markdownText.Replace(strings.Join(text, " ")))
			}
			name, text = "", nil
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			line := sc.Text()
			switch m := makeRE.FindStringSubmatch(line); {
			case m != nil:
				flush()
				name, text = m[1], []string{m[2]}
			case name != "" && strings.HasPrefix(line, "## "):
				text = append(text, strings.TrimPrefix(line, "## "))
			default:
				flush()
			}
		}
		flush()
		return b.String(), sc.Err()
	}
}

// repoRoot is the nearest directory at or above the working one that holds Pulumi.yaml.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "Pulumi.yaml")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no Pulumi.yaml above the working directory")
		}
		dir = parent
	}
}
