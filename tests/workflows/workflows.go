// Package workflows reads the GitHub workflows and the Makefile as GitHub and make run them, for the checks that
// actionlint cannot make: which jobs run a test that needs the repository's history, and in which order a release's
// jobs run and what gates them.
package workflows

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// Workflow is a workflow file's jobs, by ID.
type Workflow struct {
	File string
	Jobs map[string]Job `yaml:"jobs"`
}

// Job is what the checks read of a job: what it waits for and its steps.
type Job struct {
	Needs Needs  `yaml:"needs"`
	Steps []Step `yaml:"steps"`
}

// Step is a step: an action it uses, with its inputs, or a script it runs.
type Step struct {
	Uses string            `yaml:"uses"`
	With map[string]string `yaml:"with"`
	Run  string            `yaml:"run"`
}

// Needs is a job's needs, which GitHub takes as one ID or a list.
type Needs []string

// UnmarshalYAML takes a string or a list of strings.
func (n *Needs) UnmarshalYAML(v *yaml.Node) error {
	if v.Kind == yaml.ScalarNode {
		*n = Needs{v.Value}
		return nil
	}
	var list []string
	if err := v.Decode(&list); err != nil {
		return fmt.Errorf("needs: %w", err)
	}
	*n = list
	return nil
}

// Load reads every workflow of dir (*.yml and *.yaml).
func Load(dir string) ([]Workflow, error) {
	var files []string
	for _, pattern := range []string{"*.yml", "*.yaml"} {
		m, err := filepath.Glob(filepath.Join(dir, pattern))
		if err != nil {
			return nil, err
		}
		files = append(files, m...)
	}
	sort.Strings(files)
	var out []Workflow
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		w := Workflow{File: filepath.Base(f)}
		if err := yaml.Unmarshal(b, &w); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		out = append(out, w)
	}
	return out, nil
}

// FullHistory reports whether the job's checkout fetches every commit and tag (fetch-depth: 0): actions/checkout
// fetches one commit by default.
func (j Job) FullHistory() bool {
	for _, s := range j.Steps {
		if strings.HasPrefix(s.Uses, "actions/checkout@") && strings.TrimSpace(s.With["fetch-depth"]) == "0" {
			return true
		}
	}
	return false
}

// Script is every run step's text, in order.
func (j Job) Script() string {
	var b strings.Builder
	for _, s := range j.Steps {
		b.WriteString(s.Run)
		b.WriteString("\n")
	}
	return b.String()
}

// Before reports whether job a runs only after job b has succeeded: b is among a's needs, directly or through
// another job's.
func (w Workflow) Before(a, b string) bool {
	seen := map[string]bool{}
	var walk func(string) bool
	walk = func(id string) bool {
		if seen[id] {
			return false
		}
		seen[id] = true
		for _, n := range w.Jobs[id].Needs {
			if n == b || walk(n) {
				return true
			}
		}
		return false
	}
	return walk(a)
}

// Makefile is the targets of a Makefile, each with the targets it runs: its prerequisites and those its recipe runs
// through $(MAKE).
type Makefile map[string][]string

var (
	rule       = regexp.MustCompile(`^([A-Za-z0-9_.%/-]+(?:\s+[A-Za-z0-9_.%/-]+)*)\s*:([^=].*)?$`)
	makeInvoke = regexp.MustCompile(`(?:\$\(MAKE\)|\bmake)((?:\s+[^\s;&|)]+)*)`)
)

// LoadMakefile reads the rules of the Makefile at path.
func LoadMakefile(path string) (Makefile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	m := Makefile{}
	var current []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "\t") {
			for _, t := range current {
				m[t] = append(m[t], Invoked(line)...)
			}
			continue
		}
		if sub := rule.FindStringSubmatch(line); sub != nil && !strings.Contains(line, ":=") {
			current = strings.Fields(sub[1])
			prereqs := strings.Fields(strings.SplitN(sub[2], ";", 2)[0])
			for _, t := range current {
				m[t] = append(m[t], prereqs...)
			}
			continue
		}
		if strings.TrimSpace(line) != "" && !strings.HasPrefix(line, "#") {
			current = nil
		}
	}
	return m, sc.Err()
}

// Invoked is the make targets a line of shell runs (make X, $(MAKE) X), its flags and variables left out; make
// with no target runs the default, all.
func Invoked(line string) []string {
	var out []string
	for _, sub := range makeInvoke.FindAllStringSubmatch(line, -1) {
		targets := 0
		for _, word := range strings.Fields(sub[1]) {
			if strings.HasPrefix(word, "-") || strings.Contains(word, "=") {
				continue
			}
			if strings.ContainsAny(word, `"'$`) && !strings.HasPrefix(word, "$(") {
				break
			}
			out = append(out, word)
			targets++
		}
		if targets == 0 {
			out = append(out, "all")
		}
	}
	return out
}

// Reaches reports whether running target runs goal (itself included).
func (m Makefile) Reaches(target, goal string) bool {
	seen := map[string]bool{}
	var walk func(string) bool
	walk = func(t string) bool {
		if t == goal {
			return true
		}
		if seen[t] {
			return false
		}
		seen[t] = true
		return slices.ContainsFunc(m[t], walk)
	}
	return walk(target)
}
