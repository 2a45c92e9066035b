// Command karpenter-bump moves the bus to a new Karpenter release (package bump says what it changes):
//
//	make karpenter-bump VERSION=1.15.1
//
// With -plan, it reads the tags of Karpenter's releases on standard input and prints the versions to bump, one per
// line: each supported line's newest patch the bus does not test yet, and a newer minor version (bump.Plan). The
// weekly workflow (.github/workflows/karpenter-release.yml) opens one pull request for each.
//
// It reads the release's commit and template from GitHub (GITHUB_TOKEN, when set, raises the API's rate limit),
// and runs the go command to tidy the modules it pins and to find the release's source.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/karpenter"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/karpenter/bump"
)

func main() {
	root := flag.String("root", "../..", "the repository's root")
	version := flag.String("version", "", "the Karpenter release, such as 1.15.1 (required)")
	plan := flag.Bool("plan", false, "print the versions to bump, given the tags of Karpenter's releases on standard input")
	flag.Parse()
	if *plan {
		tags, err := io.ReadAll(os.Stdin)
		if err != nil {
			fmt.Fprintln(os.Stderr, "karpenter-bump: reading the tags:", err)
			os.Exit(1)
		}
		for _, v := range bump.Plan(strings.Fields(string(tags)), karpenter.Lines(), time.Now()) {
			fmt.Println(v)
		}
		return
	}
	if *version == "" {
		fmt.Fprintln(os.Stderr, "karpenter-bump: -version is required")
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	err := bump.Run(ctx, bump.Options{
		Root: *root, Version: *version, Fetch: fetch, Tidy: tidy, Source: source, Log: os.Stdout,
	})
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, "karpenter-bump:", err)
		os.Exit(1)
	}
}

// fetch reads the release tag's commit and its day from GitHub's API, then the template at that commit; a tag
// cut from a release branch (an LTS line's patch) has no website in its tree, so the template is then read from
// the main branch, which carries each supported version's docs, and recorded with main's commit. A line whose
// docs main no longer carries keeps its module's template policies.
func fetch(ctx context.Context, v karpenter.Version) (bump.Release, error) {
	tag, err := commitOf(ctx, "v"+v.String())
	if err != nil {
		return bump.Release{}, err
	}
	rel := bump.Release{Commit: tag.SHA, Released: tag.Commit.Committer.Date, TemplatePath: bump.TemplatePath(v)}
	for _, ref := range []string{tag.SHA, "main"} {
		commit := tag.SHA
		if ref == "main" {
			main, err := commitOf(ctx, "main")
			if err != nil {
				return bump.Release{}, err
			}
			commit = main.SHA
		}
		template, err := get(ctx, "https://raw.githubusercontent.com/aws/karpenter-provider-aws/"+commit+"/"+rel.TemplatePath)
		if errors.Is(err, errNotFound) {
			continue
		}
		if err != nil {
			return bump.Release{}, err
		}
		rel.Template, rel.TemplateCommit = template, commit
		break
	}
	return rel, nil
}

type commit struct {
	SHA    string `json:"sha"`
	Commit struct {
		Committer struct {
			Date time.Time `json:"date"`
		} `json:"committer"`
	} `json:"commit"`
}

// commitOf reads the commit a ref (a tag, a branch) names.
func commitOf(ctx context.Context, ref string) (commit, error) {
	b, err := get(ctx, "https://api.github.com/repos/aws/karpenter-provider-aws/commits/"+ref)
	if err != nil {
		return commit{}, err
	}
	var c commit
	if err := json.Unmarshal(b, &c); err != nil || len(c.SHA) != 40 {
		return commit{}, fmt.Errorf("reading the commit of %s: %w", ref, err)
	}
	return c, nil
}

var errNotFound = errors.New("not found")

func get(ctx context.Context, url string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	if token := os.Getenv("GITHUB_TOKEN"); token != "" && strings.HasPrefix(url, "https://api.github.com/") {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode == http.StatusNotFound {
		return nil, fmt.Errorf("GET %s: %w", url, errNotFound)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return b, nil
}

func tidy(ctx context.Context, dir string) error {
	cmd := exec.CommandContext(ctx, "go", "mod", "tidy")
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, os.Stderr, os.Stderr
	return cmd.Run()
}

func source(ctx context.Context, dir string) (string, error) {
	cmd := exec.CommandContext(ctx, "go", "list", "-m", "-f", "{{.Dir}}", bump.Module)
	cmd.Dir, cmd.Stderr = dir, os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("locating %s: %w", bump.Module, err)
	}
	return strings.TrimSpace(string(out)), nil
}
