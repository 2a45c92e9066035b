// Command karpenter-bump moves the bus to a new Karpenter release (package bump says what it changes):
//
//	make karpenter-bump VERSION=1.15.1
//
// It reads the release's commit and template from GitHub (GITHUB_TOKEN, when set, raises the API's rate limit),
// and runs the go command to tidy the modules it pins and to find the release's source.
package main

import (
	"context"
	"encoding/json"
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
	flag.Parse()
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

// fetch reads the release tag's commit from GitHub's API, then the template at that commit.
func fetch(ctx context.Context, v karpenter.Version) (bump.Release, error) {
	b, err := get(ctx, "https://api.github.com/repos/aws/karpenter-provider-aws/commits/v"+v.String())
	if err != nil {
		return bump.Release{}, err
	}
	var commit struct {
		SHA string `json:"sha"`
	}
	if err := json.Unmarshal(b, &commit); err != nil || len(commit.SHA) != 40 {
		return bump.Release{}, fmt.Errorf("reading the commit of tag v%s: %w", v, err)
	}
	path := bump.TemplatePath(v)
	template, err := get(ctx, "https://raw.githubusercontent.com/aws/karpenter-provider-aws/"+commit.SHA+"/"+path)
	if err != nil {
		return bump.Release{}, err
	}
	return bump.Release{Commit: commit.SHA, Template: template, TemplatePath: path}, nil
}

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
